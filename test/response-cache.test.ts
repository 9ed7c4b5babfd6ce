// The exact-match response cache, through the official SDKs as a user runs them: a key with a
// cache lifetime (or a request's x-gw-cache header) gets its second identical request answered
// by gw without the upstream, byte for byte (a stream as a stream, with its usage), billed at
// billing.cacheHitPrice of the call it repeats in a usage row marked cached. Sampled requests
// are cached only when they ask; another agent never sees an entry; failed answers are never
// kept; the bound evicts the least recently used; hits count against the key's rate limit.
import Anthropic from "@anthropic-ai/sdk";
import test from "ava";
import OpenAI from "openai";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { accessOf, addKey, makeHome, quietLogger, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let upstream: FakeOpenAI;
let gateway: TestGateway;
/** A key whose answers are cached for 10 minutes, and a second agent's key with the same lifetime. */
let cachingKey: string;
let otherAgentKey: string;
/** A key without a cache lifetime of its own. */
let plainKey: string;

function configure(config: RawConfig): void {
  config.upstream = { retries: 0, breakerFailureThreshold: 0 };
  config.providers = { openai: { type: "openai", baseUrl: upstream.url, apiKey: "sk-cache-upstream" } };
  config.routes = [{ prefix: "openai/", provider: "openai" }];
}

test.before(async () => {
  upstream = await startFakeOpenAI();
  const home = await makeHome(configure);
  gateway = await startTestGateway(home);
  cachingKey = await addKey(home, "cached-agent", "pro", { cacheTtlSeconds: 600 });
  otherAgentKey = await addKey(home, "other-agent", "pro", { cacheTtlSeconds: 600 });
  plainKey = await addKey(home, "cached-agent", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await upstream?.close();
});

const openai = (apiKey = cachingKey, base = gateway) => new OpenAI({ baseURL: base.v1, apiKey, maxRetries: 0 });
const anthropic = (apiKey = cachingKey) => new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey, maxRetries: 0 });

function rows(of: TestGateway = gateway): UsageRow[] {
  return UsageLog.readRows(homePaths(of.home).usageDir, periodOf(new Date()));
}

function upstreamCalls(): number {
  return upstream.requests.filter((request) => request.method === "POST").length;
}

async function post(path: string, body: unknown, apiKey = cachingKey, headers: Record<string, string> = {}, base = gateway) {
  const response = await fetch(`${base.v1}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** A unique prompt per test, so tests sharing the gateway never share an entry. */
const prompt = (name: string) => `cache test ${name} ${Math.random()}`;

test.serial(
  "a chat completion at temperature 0 is answered from the cache the second time: same bytes, no upstream call, a cached row at price 0",
  async (t) => {
    const body = { model: "openai/gpt-4o-mini", temperature: 0, messages: [{ role: "user", content: prompt("chat") }] };
    const before = upstreamCalls();
    const first = await post("/chat/completions", body);
    t.is(first.status, 200);
    t.is(first.headers.get("x-gw-cache"), "miss");
    t.is(upstreamCalls(), before + 1);
    const second = await post("/chat/completions", body);
    t.is(second.status, 200);
    t.is(second.headers.get("x-gw-cache"), "hit");
    t.is(second.text, first.text, "the replayed body is the original's, byte for byte");
    t.is(second.headers.get("content-type"), first.headers.get("content-type"));
    t.truthy(second.headers.get("x-ratelimit-remaining-requests"), "a hit carries the rate-limit headers");
    t.is(upstreamCalls(), before + 1, "no upstream call for the hit");

    const requestIds = [first.headers.get("x-request-id"), second.headers.get("x-request-id")];
    const [original, hit] = requestIds.map((id) => rows().find((row) => row.requestId === id));
    t.truthy(original);
    t.truthy(hit);
    t.is(original?.cached, undefined);
    t.true((original?.credits ?? 0) > 0);
    t.is(hit?.cached, true);
    t.is(hit?.credits, 0, "billing.cacheHitPrice defaults to 0: a hit is free");
    t.deepEqual(hit?.units, original?.units, "the hit's row names the usage of the call it repeats");
    t.is(hit?.endpoint, "chat.completions");
    t.is(hit?.model, "openai/gpt-4o-mini");
    t.is((await accessOf(requestIds[1] ?? "")).cache, "hit");
    t.is((await accessOf(requestIds[0] ?? "")).cache, "miss");
  },
);

test.serial("a chat stream is replayed as the same stream, usage chunk included; the SDK reads the same text", async (t) => {
  const body = {
    model: "openai/gpt-4o-mini",
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: "user" as const, content: prompt("stream") }],
  };
  const before = upstreamCalls();
  const first = await post("/chat/completions", body);
  const second = await post("/chat/completions", body);
  t.is(first.headers.get("x-gw-cache"), "miss");
  t.is(second.headers.get("x-gw-cache"), "hit");
  t.is(second.headers.get("content-type"), first.headers.get("content-type"));
  t.is(second.text, first.text, "the same events, byte for byte");
  t.regex(second.text, /"usage":\{"prompt_tokens":\d+/);
  t.true(second.text.endsWith("data: [DONE]\n\n"));
  t.is(upstreamCalls(), before + 1);

  const stream = await openai().chat.completions.create({ ...body, stream: true });
  let text = "";
  let usage: unknown;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? "";
    if (chunk.usage) usage = chunk.usage;
  }
  t.true(text.startsWith("echo: cache test stream"));
  t.truthy(usage);
  t.is(upstreamCalls(), before + 1);
});

test.serial("a sampled request is cached only when it asks: the key's lifetime alone leaves it to the upstream", async (t) => {
  const body = { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: prompt("sampled") }] };
  const before = upstreamCalls();
  const first = await post("/chat/completions", body);
  const second = await post("/chat/completions", { ...body, temperature: 0.7 });
  t.is(first.headers.get("x-gw-cache"), null, "the cache was not asked");
  t.is(second.headers.get("x-gw-cache"), null);
  t.is(upstreamCalls(), before + 2);

  // The request's own header asks, on a key without a lifetime too.
  const asked = { ...body, messages: [{ role: "user", content: prompt("asked") }] };
  const third = await post("/chat/completions", asked, plainKey, { "x-gw-cache": "15m" });
  const fourth = await post("/chat/completions", asked, plainKey, { "x-gw-cache": "15m" });
  t.is(third.headers.get("x-gw-cache"), "miss");
  t.is(fourth.headers.get("x-gw-cache"), "hit");
  t.is(fourth.text, third.text);
  t.is(upstreamCalls(), before + 3);
});

test.serial("x-gw-cache: no-store keeps a request out of its key's cache; a malformed header is a 400 naming it", async (t) => {
  const body = { model: "openai/gpt-4o-mini", temperature: 0, messages: [{ role: "user", content: prompt("no-store") }] };
  const before = upstreamCalls();
  for (let index = 0; index < 2; index += 1) {
    const answer = await post("/chat/completions", body, cachingKey, { "x-gw-cache": "no-store" });
    t.is(answer.status, 200);
    t.is(answer.headers.get("x-gw-cache"), null);
  }
  t.is(upstreamCalls(), before + 2);
  // A no-store request kept nothing: the next one without the header misses.
  t.is((await post("/chat/completions", body)).headers.get("x-gw-cache"), "miss");

  for (const bad of ["forever", "-5", "0", "10x", "31d"]) {
    const answer = await post("/chat/completions", body, cachingKey, { "x-gw-cache": bad });
    t.is(answer.status, 400, bad);
    const error = JSON.parse(answer.text).error;
    t.is(error.param, "x-gw-cache", bad);
    t.is(error.type, "invalid_request_error");
  }
});

test.serial("no answer crosses agents: another agent's identical request goes to the upstream", async (t) => {
  const body = { model: "openai/gpt-4o-mini", temperature: 0, messages: [{ role: "user", content: prompt("agents") }] };
  const before = upstreamCalls();
  t.is((await post("/chat/completions", body)).headers.get("x-gw-cache"), "miss");
  const other = await post("/chat/completions", body, otherAgentKey);
  t.is(other.headers.get("x-gw-cache"), "miss");
  t.is(upstreamCalls(), before + 2);
  // The same agent's other key shares its agent's entries when it asks.
  t.is((await post("/chat/completions", body, plainKey, { "x-gw-cache": "1h" })).headers.get("x-gw-cache"), "hit");
  t.is(upstreamCalls(), before + 2);
});

test.serial("an upstream error or a stream cut off is never kept", async (t) => {
  const body = { model: "openai/gpt-4o-mini", temperature: 0, messages: [{ role: "user", content: prompt("errors") }] };
  upstream.enqueue({ status: 500 });
  const failed = await post("/chat/completions", body);
  t.is(failed.status, 502);
  const retried = await post("/chat/completions", body);
  t.is(retried.status, 200);
  t.is(retried.headers.get("x-gw-cache"), "miss", "the error was not kept");

  const streamed = { ...body, stream: true, messages: [{ role: "user", content: prompt("cut") }] };
  upstream.enqueue({ dropAfterChunks: 1, content: "a long answer cut off part of the way" });
  const cut = await post("/chat/completions", streamed);
  t.is(cut.status, 200);
  t.regex(cut.text, /"error"/, "the stream ended with an error event");
  const before = upstreamCalls();
  const again = await post("/chat/completions", streamed);
  t.is(again.headers.get("x-gw-cache"), "miss", "the cut stream was not kept");
  t.is(upstreamCalls(), before + 1);
  t.notRegex(again.text, /"error"/);
});

test.serial("messages, streamed and not, are replayed through the Anthropic SDK", async (t) => {
  const before = upstreamCalls();
  const request = { model: "openai/gpt-4o-mini", max_tokens: 100, temperature: 0, messages: [{ role: "user" as const, content: prompt("messages") }] };
  const first = await anthropic().messages.create(request).withResponse();
  const second = await anthropic().messages.create(request).withResponse();
  t.is(first.response.headers.get("x-gw-cache"), "miss");
  t.is(second.response.headers.get("x-gw-cache"), "hit");
  t.deepEqual(second.data, first.data);
  t.is(upstreamCalls(), before + 1);

  const streamed = { ...request, messages: [{ role: "user" as const, content: prompt("messages-stream") }] };
  const texts: string[] = [];
  for (let index = 0; index < 2; index += 1) {
    const message = await anthropic().messages.stream(streamed).finalMessage();
    texts.push(JSON.stringify(message));
  }
  t.is(texts[1], texts[0], "the replayed stream accumulates to the same message");
  t.is(upstreamCalls(), before + 2);
  const hit = rows().at(-1);
  t.is(hit?.endpoint, "messages");
  t.is(hit?.cached, true);
});

test.serial("responses, streamed and not, are replayed through the OpenAI SDK", async (t) => {
  const before = upstreamCalls();
  const request = { model: "openai/gpt-4o-mini", temperature: 0, store: false, input: prompt("responses") };
  const first = await openai().responses.create(request).withResponse();
  const second = await openai().responses.create(request).withResponse();
  t.is(first.response.headers.get("x-gw-cache"), "miss");
  t.is(second.response.headers.get("x-gw-cache"), "hit");
  t.is(second.data.output_text, first.data.output_text);
  t.is(second.data.id, first.data.id, "the same response, as it was answered");
  t.is(upstreamCalls(), before + 1);

  const streamed = { ...request, input: prompt("responses-stream"), stream: true as const };
  const finals: string[] = [];
  for (let index = 0; index < 2; index += 1) {
    const stream = await openai().responses.create(streamed);
    for await (const event of stream) if (event.type === "response.completed") finals.push(JSON.stringify(event.response));
  }
  t.is(finals.length, 2);
  t.is(finals[1], finals[0]);
  t.is(upstreamCalls(), before + 2);
});

test.serial("embeddings are cached on a key's lifetime (they never sample)", async (t) => {
  const before = upstreamCalls();
  const input = prompt("embeddings");
  const first = await openai().embeddings.create({ model: "openai/text-embedding-3-small", input }).withResponse();
  const second = await openai().embeddings.create({ model: "openai/text-embedding-3-small", input }).withResponse();
  t.is(first.response.headers.get("x-gw-cache"), "miss");
  t.is(second.response.headers.get("x-gw-cache"), "hit");
  t.deepEqual(second.data.data[0]?.embedding, first.data.data[0]?.embedding);
  t.is(upstreamCalls(), before + 1);
});

test.serial("a key's model patterns and the route still apply before a hit", async (t) => {
  const body = { model: "nowhere/model", temperature: 0, messages: [{ role: "user", content: prompt("route") }] };
  const answer = await post("/chat/completions", body);
  t.is(answer.status, 404);
  t.is(answer.headers.get("x-gw-cache"), null);
});

test.serial("a hit counts against the key's requests per minute: over it, 429 and no row", async (t) => {
  const limited = await addKey(gateway.home, "limited-agent", "pro", { cacheTtlSeconds: 600, rpm: 2 });
  const body = { model: "openai/gpt-4o-mini", temperature: 0, messages: [{ role: "user", content: prompt("rpm") }] };
  t.is((await post("/chat/completions", body, limited)).headers.get("x-gw-cache"), "miss");
  t.is((await post("/chat/completions", body, limited)).headers.get("x-gw-cache"), "hit");
  const before = rows().length;
  const over = await post("/chat/completions", body, limited);
  t.is(over.status, 429);
  t.is(rows().length, before, "a refused hit is not billed");
});

test.serial("/metrics counts hits and misses by endpoint, and the entries and bytes kept", async (t) => {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const sample = (name: string, labels = "") =>
    Number(new RegExp(`^${name}${labels.replaceAll("{", "\\{").replaceAll("}", "\\}")} (\\S+)$`, "m").exec(text)?.[1]);
  t.true(sample("gw_cache_hits_total", '{endpoint="chat.completions"}') >= 4);
  t.true(sample("gw_cache_misses_total", '{endpoint="chat.completions"}') >= 4);
  t.true(sample("gw_cache_hits_total", '{endpoint="embeddings"}') >= 1);
  t.true(sample("gw_cache_entries") >= 8);
  t.true(sample("gw_cache_bytes") > 1000);
});

test.serial("cacheHitPrice bills a share of the original; the byte bound evicts the least recently used entry", async (t) => {
  const home = await makeHome((config) => {
    configure(config);
    config.billing = { cacheHitPrice: 0.5 };
    // Each answer echoes its 2000-character question (about 2.6 KB kept): room for two, not three.
    config.cache = { maxBytes: 6500 };
  });
  const priced = await startTestGateway(home);
  t.teardown(() => priced.shutdown());
  const key = await addKey(home, "priced-agent", "pro", { cacheTtlSeconds: 600 });
  const ask = (name: string) =>
    post("/chat/completions", { model: "openai/gpt-4o-mini", temperature: 0, messages: [{ role: "user", content: name.padEnd(2000, ".") }] }, key, {}, priced);

  const first = await ask("first question");
  const hit = await ask("first question");
  t.is(hit.headers.get("x-gw-cache"), "hit");
  const [original, repeated] = [first, hit].map((answer) => rows(priced).find((row) => row.requestId === answer.headers.get("x-request-id")));
  t.true((original?.credits ?? 0) > 1);
  t.is(repeated?.credits, Math.round((original?.credits ?? 0) * 0.5));
  t.true(repeated?.cached);

  // "first" was used last; two newer entries push it out only once it is the oldest.
  t.is((await ask("second question")).headers.get("x-gw-cache"), "miss");
  t.is((await ask("first question")).headers.get("x-gw-cache"), "hit", "a hit refreshes the entry");
  t.is((await ask("third question")).headers.get("x-gw-cache"), "miss");
  t.is((await ask("second question")).headers.get("x-gw-cache"), "miss", "the least recently used entry was evicted");
});

test.after.always(() => {
  // The test logger keeps access lines; nothing here may have logged an upstream key.
  for (const line of quietLogger.lines) if (line.includes("sk-cache-upstream")) throw new Error(`a secret reached the log: ${line}`);
});
