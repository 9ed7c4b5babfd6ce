// Request tags (docs/decisions.md §24): the `x-gw-tags` header and OpenAI `metadata` pairs land
// on the request's usage rows (live calls through the official SDK, a tool endpoint, every line
// of a batch); a malformed header is a 400 naming it before anything is billed; metadata that
// cannot be a tag is simply not one; rows without tags have no `tags` field.
import { readFileSync } from "node:fs";
import test from "ava";
import OpenAI, { toFile } from "openai";
import type { Batch } from "openai/resources/batches";
import { homePaths } from "../src/config/paths.js";
import { usageLogFile } from "../src/store/usage-files.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { type FakeTavily, startFakeTavily } from "./fakes/tavily.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const TAVILY_KEY = "tvly-tags-key";

let upstream: FakeOpenAI;
let tavily: FakeTavily;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  upstream = await startFakeOpenAI();
  tavily = await startFakeTavily({ apiKey: TAVILY_KEY });
  const home = await makeHome((config) => {
    config.upstream = { retries: 0, breakerFailureThreshold: 0 };
    config.providers = {
      compat: { type: "openai", baseUrl: upstream.url, apiKey: "sk-compat" },
      tavily: { type: "tavily", baseUrl: tavily.url, apiKey: TAVILY_KEY },
    };
    config.routes = [{ prefix: "compat/", provider: "compat" }];
    config.models = [{ id: "compat/gpt-x", name: "GPT X", context_length: 100_000, pricing: { input_per_mtok: 3, output_per_mtok: 15 } }];
    config.tools.search = { default: "tavily/advanced", allow: [] };
    config.batch = { concurrency: 2, tickSeconds: 1 };
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "tagger", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await upstream?.close();
  await tavily?.close();
});

const openai = (headers: Record<string, string> = {}) => new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0, defaultHeaders: headers });
const allRows = () => UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date()));
const rowsOf = (requestId: string | null) => allRows().filter((row) => row.requestId === requestId);

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${gateway.v1}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, json: (await response.json()) as any };
}

const chat = { model: "compat/gpt-x", messages: [{ role: "user" as const, content: "hi" }] };

test.serial("x-gw-tags lands on the row: trimmed, in order, duplicates collapsed", async (t) => {
  const { response } = await openai({ "x-gw-tags": " team:search , feature=autocomplete,team:search,user@example.com " })
    .chat.completions.create(chat)
    .withResponse();
  const [row] = rowsOf(response.headers.get("x-request-id"));
  t.deepEqual(row?.tags, ["team:search", "feature=autocomplete", "user@example.com"]);
});

test.serial("chat completions metadata pairs become key:value tags after the header's; a pair that cannot be a tag is left out", async (t) => {
  const { response } = await openai({ "x-gw-tags": "app/web" })
    .chat.completions.create({ ...chat, metadata: { customer: "acme", note: "has spaces in it", "team:search": "x", job: "7" } })
    .withResponse();
  t.is(response.status, 200, "metadata OpenAI accepts never fails a request");
  const [row] = rowsOf(response.headers.get("x-request-id"));
  t.deepEqual(row?.tags, ["app/web", "customer:acme", "team:search:x", "job:7"]);
  const sent = upstream.requests.at(-1)?.body;
  t.deepEqual(sent?.metadata, { customer: "acme", note: "has spaces in it", "team:search": "x", job: "7" }, "the metadata still goes upstream as sent");
});

test.serial("responses metadata becomes tags", async (t) => {
  const { response } = await openai()
    .responses.create({ model: "compat/gpt-x", input: "hi", metadata: { run: "nightly-42" } })
    .withResponse();
  const [row] = rowsOf(response.headers.get("x-request-id"));
  t.is(row?.endpoint, "responses");
  t.deepEqual(row?.tags, ["run:nightly-42"]);
});

test.serial("a tool endpoint takes the header too (a search)", async (t) => {
  const answer = await post("/search", { query: "tags" }, { "x-gw-tags": "crawler" });
  t.is(answer.status, 200);
  const [row] = rowsOf(answer.headers.get("x-request-id"));
  t.is(row?.endpoint, "search");
  t.deepEqual(row?.tags, ["crawler"]);
});

test.serial("a malformed header is a 400 naming x-gw-tags and the tag, before anything is billed or sent upstream", async (t) => {
  const before = { rows: allRows().length, upstream: upstream.requests.length, searches: tavily.requests.length };
  const bad = await post("/chat/completions", chat, { "x-gw-tags": "ok, not ok" });
  t.is(bad.status, 400);
  t.like(bad.json.error, { type: "invalid_request_error", code: "invalid_parameter", param: "x-gw-tags" });
  t.regex(bad.json.error.message, /"not ok"/);
  t.is(bad.headers.get("x-gw-credits"), null);

  const tooLong = await post("/chat/completions", chat, { "x-gw-tags": "a".repeat(65) });
  t.is(tooLong.status, 400);
  t.is(tooLong.json.error.param, "x-gw-tags");

  const tooMany = await post("/chat/completions", chat, { "x-gw-tags": Array.from({ length: 17 }, (_, index) => `t${index}`).join(",") });
  t.is(tooMany.status, 400);
  t.regex(tooMany.json.error.message, /at most 16/);

  const search = await post("/search", { query: "x" }, { "x-gw-tags": "bad tag" });
  t.is(search.status, 400);
  t.is(search.json.error.param, "x-gw-tags");

  t.is(allRows().length, before.rows, "nothing billed");
  t.is(upstream.requests.length, before.upstream, "nothing sent");
  t.is(tavily.requests.length, before.searches);
});

test.serial("a row without tags has no tags field at all, as rows always were", async (t) => {
  const { response } = await openai().chat.completions.create(chat).withResponse();
  const requestId = response.headers.get("x-request-id")!;
  const line = readFileSync(usageLogFile(homePaths(gateway.home).usageDir, periodOf(new Date())), "utf8")
    .split("\n")
    .find((text) => text.includes(`"requestId":"${requestId}"`));
  t.truthy(line);
  t.false(line!.includes('"tags"'));
  t.deepEqual(Object.keys(JSON.parse(line!)), ["id", "time", "agent", "keyPrefix", "endpoint", "model", "provider", "units", "credits", "requestId"]);
});

test.serial("a batch's x-gw-tags and metadata tag every line's row; a line's own metadata adds to its row", async (t) => {
  const lines = [0, 1, 2].map((index) =>
    JSON.stringify({
      custom_id: `line-${index}`,
      method: "POST",
      url: "/v1/chat/completions",
      body: { ...chat, max_tokens: 20, ...(index === 2 ? { metadata: { step: "three" } } : {}) },
    }),
  );
  const sdk = openai({ "x-gw-tags": "nightly" });
  const file = await sdk.files.create({ file: await toFile(Buffer.from(`${lines.join("\n")}\n`), "input.jsonl"), purpose: "batch" });
  const created = await sdk.batches.create({
    input_file_id: file.id,
    endpoint: "/v1/chat/completions",
    completion_window: "24h",
    metadata: { project: "atlas", description: "free text is no tag" },
  });
  const batch: Batch = await eventually(() => sdk.batches.retrieve(created.id), {
    what: `batch ${created.id} to end`,
    until: (each) => ["completed", "failed", "expired", "cancelled"].includes(each.status),
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  t.is(batch.status, "completed");
  t.deepEqual(batch.metadata, { project: "atlas", description: "free text is no tag" }, "the batch object's metadata is as sent");
  const rows: UsageRow[] = allRows().filter((row) => row.batch === created.id);
  t.is(rows.length, 3);
  const byLine = new Map(rows.map((row) => [row.id.split(":").at(-1), row.tags]));
  t.deepEqual(byLine.get("0"), ["nightly", "project:atlas"]);
  t.deepEqual(byLine.get("1"), ["nightly", "project:atlas"]);
  t.deepEqual(byLine.get("2"), ["nightly", "project:atlas", "step:three"]);

  // The output lines' bodies say what each line was charged, as a live answer does.
  const output = (await (await sdk.files.content(batch.output_file_id!)).text())
    .trim()
    .split("\n")
    .map((text) => JSON.parse(text));
  for (const line of output) {
    const row = rows.find((each) => each.requestId === line.response.request_id);
    t.is(line.response.body.usage.gw_credits, row?.credits);
  }
});
