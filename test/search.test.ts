// POST /v1/search through a real gateway against fakes speaking Brave's, Tavily's and SearXNG's
// wire formats: the envelope, dates normalised from each vendor's forms, fallback in allowlist
// order (5xx, 429, timeout, a refused key, SearXNG's all-engines-unresponsive 200), the all-fail
// answer naming no key, every error row, one usage row per answered search and none otherwise.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { type FakeBrave, startFakeBrave } from "./fakes/brave.js";
import { type FakeSearxng, startFakeSearxng } from "./fakes/searxng.js";
import { type FakeTavily, startFakeTavily } from "./fakes/tavily.js";
import { addKey, makeHome, quietLogger, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const BRAVE_KEY = "brave-secret-token-123";
const TAVILY_KEY = "tvly-secret-key-456";

let brave: FakeBrave;
let tavily: FakeTavily;
let searxng: FakeSearxng;
let gateway: TestGateway;
let home: string;
let key: string;

function configure(config: RawConfig): void {
  // Long enough that a fake answering slowly on a loaded machine is not a timeout; the timeout test's
  // vendor waits well past it.
  config.upstream = { retries: 0, firstByteTimeoutMs: 4000 };
  config.providers = {
    brave: { type: "brave", baseUrl: brave.url, apiKey: BRAVE_KEY },
    tavily: { type: "tavily", baseUrl: tavily.url, apiKey: TAVILY_KEY },
    searxng: { type: "searxng", baseUrl: searxng.url },
  };
  config.tools.search = { default: "brave/web", allow: ["tavily/basic", "searxng/web"] };
  config.plans = { tiny: { monthlyCredits: 3000, freeTierOnly: false } };
}

test.before(async () => {
  [brave, tavily, searxng] = await Promise.all([startFakeBrave({ apiKey: BRAVE_KEY }), startFakeTavily({ apiKey: TAVILY_KEY }), startFakeSearxng()]);
  home = await makeHome(configure);
  gateway = await startTestGateway(home);
  key = await addKey(home, "searcher", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await Promise.all([brave?.close(), tavily?.close(), searxng?.close()]);
});

test.beforeEach(() => {
  brave.reset();
  tavily.reset();
  searxng.reset();
});

async function search(body: unknown, apiKey = key, target = gateway): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${target.url}/v1/search`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), text };
}

function rows(): UsageRow[] {
  return UsageLog.readRows(homePaths(home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "search");
}

function sentUpstream(): number {
  return brave.requests.length + tavily.requests.length + searxng.requests.length;
}

test.serial("Brave answers first: the envelope, plain snippets, dates from page_age and age, billed once", async (t) => {
  const before = rows().length;
  const answer = await search({ query: "rust async", max_results: 3 });
  t.is(answer.status, 200, answer.text);
  t.is(answer.body.success, true);
  t.like(answer.body.data, { query: "rust async", provider: "brave" });
  const [first, second, third] = answer.body.data.results;
  t.deepEqual(first, {
    title: "Async in Rust & Tokio",
    url: "https://example.test/rust-async",
    snippet: "An introduction to async & await in Rust's standard library.",
    publishedDate: "2026-01-02",
  });
  t.regex(second.publishedDate, /^\d{4}-\d{2}-\d{2}$/, "from `2 days ago`");
  t.is(Date.parse(second.publishedDate) <= Date.now() && Date.parse(second.publishedDate) > Date.now() - 4 * 86_400_000, true);
  t.false("publishedDate" in third, "no date from the vendor: none invented");
  const sent = brave.requests.at(-1)!;
  t.is(sent.headers["x-subscription-token"], BRAVE_KEY);
  t.is(sent.query.q, "rust async");
  t.is(sent.query.count, "3");
  t.is(tavily.requests.length + searxng.requests.length, 0, "nothing else asked");
  t.is(rows().length, before + 1);
  t.like(rows().at(-1)!, { model: "brave/web", provider: "brave", credits: 5000 });
});

test.serial("Tavily's RFC 1123 dates and SearXNG's ISO dates, as the fallbacks answer", async (t) => {
  brave.set({ status: 503 });
  const fromTavily = await search({ query: "rust release" });
  t.is(fromTavily.status, 200, fromTavily.text);
  t.is(fromTavily.body.data.provider, "tavily");
  t.is(fromTavily.body.data.results[0].publishedDate, "2026-01-01");
  t.false("publishedDate" in fromTavily.body.data.results[1]);
  t.is(tavily.requests.at(-1)!.headers.authorization, `Bearer ${TAVILY_KEY}`);
  t.is(tavily.requests.at(-1)!.json.max_results, 10);

  tavily.set({ status: 429, retryAfter: "30" });
  const fromSearxng = await search({ query: "rust async" });
  t.is(fromSearxng.status, 200, fromSearxng.text);
  t.is(fromSearxng.body.data.provider, "searxng");
  t.is(fromSearxng.body.data.results[0].publishedDate, "2025-12-31");
  t.is(fromSearxng.body.data.results[0].snippet, "An introduction to async & await …");
  t.is(searxng.requests.at(-1)!.query.format, "json");
  t.like(rows().at(-1)!, { model: "searxng/web", provider: "searxng", credits: 0 });
});

test.serial("every vendor failure moves on: timeout, a refused key, a malformed answer, SearXNG with every engine down", async (t) => {
  brave.set({ firstByteDelayMs: 10_000 });
  tavily.set({ status: 401, errorBody: { detail: { error: `Unauthorized: invalid API key ${TAVILY_KEY}` } } });
  searxng.set({ allEnginesUnresponsive: true });
  const before = rows().length;
  const failed = await search({ query: "nothing works" });
  t.is(failed.status, 502, failed.text);
  t.like(failed.body.error, { type: "upstream_error", code: "upstream_unavailable" });
  t.regex(failed.body.error.message, /brave: .*(timeout|took longer|first byte)/i);
  t.regex(failed.body.error.message, /tavily: HTTP 401/);
  t.regex(failed.body.error.message, /searxng: .*google/);
  t.false(failed.text.includes(BRAVE_KEY));
  t.false(failed.text.includes(TAVILY_KEY));
  t.is(rows().length, before, "no row for a search nobody answered");
  for (const line of quietLogger.lines) {
    t.false(line.includes(TAVILY_KEY));
    t.false(line.includes(BRAVE_KEY));
  }

  brave.set({ malformed: true });
  tavily.set({});
  const recovered = await search({ query: "second try" });
  t.is(recovered.status, 200);
  t.is(recovered.body.data.provider, "tavily");
});

test.serial("a real empty answer is 200 with no results, and billed", async (t) => {
  brave.set({ results: [] });
  const before = rows().length;
  const answer = await search({ query: "zzzzqqqq nothing" });
  t.is(answer.status, 200);
  t.deepEqual(answer.body.data.results, []);
  t.is(answer.body.data.provider, "brave");
  t.is(rows().length, before + 1);
});

test.serial("bad requests are 400 naming the field, with nothing sent upstream or billed", async (t) => {
  const before = rows().length;
  const cases: Array<[Record<string, unknown>, string]> = [
    [{}, "query"],
    [{ query: "" }, "query"],
    [{ query: "   " }, "query"],
    [{ query: "x".repeat(501) }, "query"],
    [{ query: 42 }, "query"],
    [{ query: "ok", max_results: 0 }, "max_results"],
    [{ query: "ok", max_results: 21 }, "max_results"],
    [{ query: "ok", max_results: 2.5 }, "max_results"],
    [{ query: "ok", max_results: "5" }, "max_results"],
    [{ query: "ok", safesearch: "off" }, "safesearch"],
  ];
  for (const [body, param] of cases) {
    const answer = await search(body);
    t.is(answer.status, 400, JSON.stringify(body));
    t.is(answer.body.error.param, param, JSON.stringify(body));
  }
  t.is((await search({ query: "x".repeat(500) })).status, 200, "500 characters is the limit, not over it");
  t.is(sentUpstream(), 1);
  t.is(rows().length, before + 1);
});

test.serial("402 when the dearest candidate cannot be paid for; 401 without a key", async (t) => {
  const poor = await addKey(home, "poor-searcher", "tiny");
  // 3000 credits: Tavily's 8000 cannot be held.
  const answer = await search({ query: "anything" }, poor);
  t.is(answer.status, 402);
  t.is(answer.body.error.code, "insufficient_credits");
  t.is(sentUpstream(), 0);
  const anonymous = await fetch(`${gateway.url}/v1/search`, { method: "POST", body: "{}" });
  t.is(anonymous.status, 401);
});

test("a fresh install has no search provider: 503 search_not_configured", async (t) => {
  const freshHome = await makeHome();
  const fresh = await startTestGateway(freshHome);
  try {
    const freshKey = await addKey(freshHome, "new-user", "pro");
    const answer = await search({ query: "hello" }, freshKey, fresh);
    t.is(answer.status, 503);
    t.deepEqual(Object.keys(answer.body.error).sort(), ["code", "message", "type"]);
    t.like(answer.body.error, { type: "server_error", code: "search_not_configured" });
  } finally {
    await fresh.shutdown();
  }
});

test.serial("MCP web_search: the results as text and the endpoint's data as structured content; errors carry their code", async (t) => {
  const client = new Client({ name: "gw-search-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  try {
    const result = (await client.callTool({ name: "web_search", arguments: { query: "rust async", max_results: 2 } })) as CallToolResult;
    t.falsy(result.isError, JSON.stringify(result.content));
    const data = result.structuredContent as { provider: string; results: Array<{ title: string; publishedDate?: string }> };
    t.is(data.provider, "brave");
    t.is(data.results.length, 2);
    t.is(data.results[0]!.publishedDate, "2026-01-02");
    const text = result.content[0]?.type === "text" ? result.content[0].text : "";
    t.regex(text, /^1\. Async in Rust & Tokio\nhttps:\/\/example\.test\/rust-async \(2026-01-02\)\n/);
    const refused = (await client.callTool({ name: "web_search", arguments: { query: "x".repeat(501) } })) as CallToolResult;
    t.true(refused.isError);
    const envelope = JSON.parse(refused.content[0]?.type === "text" ? refused.content[0].text : "{}") as { error: { param: string; status: number } };
    t.like(envelope.error, { param: "query", status: 400 });
  } finally {
    await client.close();
  }
});
