// What each call cost, told to the client (docs/decisions.md §24): the `x-gw-credits` header on
// every non-streamed answer that wrote usage rows, equal to the credits of those rows (a Responses
// call that searched the web: its search rows and its model calls together), and `usage.gw_credits`
// in the chat completion, message, Response and embeddings bodies, read through the official
// SDKs. A cache hit says what the hit cost while replaying the original body byte for byte; a
// request refused before anything was billed, and a stream, carry no header.
import Anthropic from "@anthropic-ai/sdk";
import test from "ava";
import OpenAI from "openai";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { type FakeAnthropic, startFakeAnthropic } from "./fakes/anthropic.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { type FakeTavily, startFakeTavily } from "./fakes/tavily.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const TAVILY_KEY = "tvly-credits-key";

let upstream: FakeOpenAI;
let claudeUpstream: FakeAnthropic;
let images: FakeOpenAIImages;
let tavily: FakeTavily;
let gateway: TestGateway;
let key: string;
let cachingKey: string;
let brokeKey: string;

test.before(async () => {
  upstream = await startFakeOpenAI();
  claudeUpstream = await startFakeAnthropic();
  images = await startFakeOpenAIImages();
  tavily = await startFakeTavily({ apiKey: TAVILY_KEY });
  const home = await makeHome((config) => {
    config.upstream = { retries: 0, breakerFailureThreshold: 0 };
    config.providers = {
      compat: { type: "openai", baseUrl: upstream.url, apiKey: "sk-compat" },
      openai: { type: "openai", baseUrl: images.url, apiKey: "sk-images" },
      tavily: { type: "tavily", baseUrl: tavily.url, apiKey: TAVILY_KEY },
      claude: { type: "anthropic", baseUrl: claudeUpstream.url, apiKey: "sk-ant-credits" },
    };
    config.routes = [
      { prefix: "compat/", provider: "compat" },
      { prefix: "claude/", provider: "claude" },
    ];
    config.models = [
      { id: "compat/gpt-x", name: "GPT X", context_length: 100_000, pricing: { input_per_mtok: 3, output_per_mtok: 15 } },
      { id: "claude/claude-x", name: "Claude X", context_length: 100_000, pricing: { input_per_mtok: 3, output_per_mtok: 15 } },
      { id: "compat/text-embedding-3-small", name: "Embed", context_length: 8191, pricing: { input_per_mtok: 20, output_per_mtok: 0 } },
    ];
    config.tools.image = { default: "openai/gpt-image-1", allow: [] };
    config.tools.search = { default: "tavily/advanced", allow: [] };
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "payer", "pro");
  cachingKey = await addKey(home, "payer", "pro", { cacheTtlSeconds: 600 });
  brokeKey = await addKey(home, "payer", "pro", { budget: { credits: 1, period: "month" } });
});

test.after.always(async () => {
  await gateway?.shutdown();
  await upstream?.close();
  await claudeUpstream?.close();
  await images?.close();
  await tavily?.close();
});

test.beforeEach(() => {
  upstream.reset();
  tavily.reset();
});

const openai = (apiKey = key) => new OpenAI({ baseURL: gateway.v1, apiKey, maxRetries: 0 });
const anthropic = (apiKey = key) => new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey, maxRetries: 0 });

function rowsOf(requestId: string | null): UsageRow[] {
  return UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.requestId === requestId);
}

/** The credits of every row the request wrote: what its header must say. */
function creditsOf(requestId: string | null): number {
  const rows = rowsOf(requestId);
  if (rows.length === 0) throw new Error(`no usage row for ${requestId}`);
  return rows.reduce((sum, row) => sum + row.credits, 0);
}

async function post(path: string, body: unknown, apiKey = key) {
  const response = await fetch(`${gateway.v1}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

test.serial("chat completions: x-gw-credits and usage.gw_credits are the row's credits, through the openai SDK", async (t) => {
  upstream.enqueue({ content: "hello", usage: { prompt_tokens: 1200, completion_tokens: 300 } });
  const { data, response } = await openai()
    .chat.completions.create({ model: "compat/gpt-x", messages: [{ role: "user", content: "hi" }] })
    .withResponse();
  const credits = creditsOf(response.headers.get("x-request-id"));
  t.is(credits, Math.round(1200 * 3 + 300 * 15), "the price of what the upstream reported");
  t.is(response.headers.get("x-gw-credits"), String(credits));
  const usage = data.usage as unknown as { gw_credits?: number; prompt_tokens: number };
  t.is(usage.gw_credits, credits);
  t.is(usage.prompt_tokens, 1200, "the usage the SDK reads is otherwise the upstream's");
  t.is(data.choices[0]?.message.content, "hello");
});

test.serial("messages: the header and usage.gw_credits, through the Anthropic SDK", async (t) => {
  upstream.enqueue({ content: "bonjour", usage: { prompt_tokens: 500, completion_tokens: 20 } });
  const { data, response } = await anthropic()
    .messages.create({ model: "compat/gpt-x", max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
    .withResponse();
  const credits = creditsOf(response.headers.get("x-request-id"));
  t.true(credits > 0);
  t.is(response.headers.get("x-gw-credits"), String(credits));
  t.is((data.usage as unknown as { gw_credits?: number }).gw_credits, credits);
  t.is(data.usage.input_tokens, 500);
});

test.serial("responses: the header and usage.gw_credits, through the openai SDK", async (t) => {
  upstream.enqueue({ content: "an answer", usage: { prompt_tokens: 700, completion_tokens: 40 } });
  const { data, response } = await openai().responses.create({ model: "compat/gpt-x", input: "hi" }).withResponse();
  const credits = creditsOf(response.headers.get("x-request-id"));
  t.true(credits > 0);
  t.is(response.headers.get("x-gw-credits"), String(credits));
  t.is((data.usage as unknown as { gw_credits?: number }).gw_credits, credits);
  t.is(data.output_text, "an answer");
});

test.serial("responses with web_search: the header sums the search row and both model calls", async (t) => {
  upstream.enqueue(
    { toolCalls: [{ id: "call_1", name: "gw_web_search", arguments: JSON.stringify({ query: "news" }) }], usage: { prompt_tokens: 10, completion_tokens: 5 } },
    { content: "the news", usage: { prompt_tokens: 40, completion_tokens: 6 } },
  );
  const { data, response } = await openai()
    .responses.create({ model: "compat/gpt-x", input: "news?", tools: [{ type: "web_search" }] })
    .withResponse();
  const requestId = response.headers.get("x-request-id");
  const rows = rowsOf(requestId);
  t.deepEqual(rows.map((row) => row.endpoint).sort(), ["responses", "responses", "search"]);
  const credits = creditsOf(requestId);
  t.is(response.headers.get("x-gw-credits"), String(credits));
  t.is((data.usage as unknown as { gw_credits?: number }).gw_credits, credits);
  t.true(credits > (rows.find((row) => row.endpoint === "search")?.credits ?? 0), "more than the search alone");
});

test.serial("embeddings: the header and usage.gw_credits, through the openai SDK", async (t) => {
  const { data, response } = await openai()
    .embeddings.create({ model: "compat/text-embedding-3-small", input: ["one", "two"] })
    .withResponse();
  const credits = creditsOf(response.headers.get("x-request-id"));
  t.is(response.headers.get("x-gw-credits"), String(credits));
  t.is((data.usage as unknown as { gw_credits?: number }).gw_credits, credits);
  t.is(data.data.length, 2);
});

test.serial("an image generation carries the header (its body has no usage object)", async (t) => {
  const { response } = await openai().images.generate({ model: "gpt-image-1", prompt: "a red fox", size: "1024x1024", quality: "low" }).withResponse();
  const credits = creditsOf(response.headers.get("x-request-id"));
  t.true(credits > 0);
  t.is(response.headers.get("x-gw-credits"), String(credits));
});

test.serial("a search carries the header", async (t) => {
  const answer = await post("/search", { query: "gw gateway" });
  t.is(answer.status, 200);
  t.is(answer.headers.get("x-gw-credits"), String(creditsOf(answer.headers.get("x-request-id"))));
});

test.serial("a cache hit's header says what the hit cost; its body is the original's, byte for byte, gw_credits included", async (t) => {
  const body = { model: "compat/gpt-x", temperature: 0, messages: [{ role: "user", content: `cached ${Math.random()}` }] };
  const first = await post("/chat/completions", body, cachingKey);
  const second = await post("/chat/completions", body, cachingKey);
  t.is(first.headers.get("x-gw-cache"), "miss");
  t.is(second.headers.get("x-gw-cache"), "hit");
  const original = creditsOf(first.headers.get("x-request-id"));
  t.true(original > 0);
  t.is(first.headers.get("x-gw-credits"), String(original));
  t.is(JSON.parse(first.text).usage.gw_credits, original);
  t.is(second.text, first.text, "the replayed body keeps the original's gw_credits");
  const hit = rowsOf(second.headers.get("x-request-id"));
  t.is(hit.length, 1);
  t.true(hit[0]?.cached);
  t.is(second.headers.get("x-gw-credits"), "0", "billing.cacheHitPrice defaults to 0: the hit was free");
});

test.serial("nothing billed, no header: a 402 before any upstream call, a 400, a stream's headers", async (t) => {
  const refused = await post("/chat/completions", { model: "compat/gpt-x", max_tokens: 1000, messages: [{ role: "user", content: "hi" }] }, brokeKey);
  t.is(refused.status, 402);
  t.is(refused.headers.get("x-gw-credits"), null);
  t.deepEqual(rowsOf(refused.headers.get("x-request-id")), []);

  const invalid = await post("/chat/completions", { model: "compat/gpt-x", messages: [] });
  t.is(invalid.status, 400);
  t.is(invalid.headers.get("x-gw-credits"), null);

  const streamed = await post("/chat/completions", { model: "compat/gpt-x", stream: true, messages: [{ role: "user", content: "hi" }] });
  t.is(streamed.status, 200);
  t.is(streamed.headers.get("x-gw-credits"), null, "a stream's headers leave before its row is written");
  t.true(creditsOf(streamed.headers.get("x-request-id")) > 0, "yet it is billed");
});

/** The `data:` frames of an SSE body, parsed (the chat stream's closing `[DONE]` left out). */
function dataFrames(text: string): Array<Record<string, any>> {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice("data: ".length)) as Record<string, any>);
}

test.serial("a stream says what it cost in its usage event: chat's last chunk, whether the upstream sent usage or not, and response.completed", async (t) => {
  for (const behaviour of [{ usage: { prompt_tokens: 9, completion_tokens: 4 } }, { omitUsage: true }]) {
    upstream.enqueue({ content: "streamed answer", ...behaviour });
    const streamed = await post("/chat/completions", {
      model: "compat/gpt-x",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "hi" }],
    });
    t.is(streamed.status, 200);
    t.true(streamed.text.trimEnd().endsWith("data: [DONE]"));
    const chunks = dataFrames(streamed.text);
    const credits = creditsOf(streamed.headers.get("x-request-id"));
    t.true(credits > 0);
    t.is(chunks.at(-1)!.usage.gw_credits, credits, `the last chunk's usage (${JSON.stringify(behaviour)})`);
    t.is(chunks.filter((chunk) => chunk.usage).length, 1, "one usage chunk");
    t.is(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join(""), "streamed answer", "the text streamed in full before it");
  }

  upstream.enqueue({ content: "a response", usage: { prompt_tokens: 7, completion_tokens: 3 } });
  const response = await post("/responses", { model: "compat/gpt-x", input: "hi", stream: true });
  t.is(response.status, 200);
  const completed = dataFrames(response.text).at(-1)!;
  t.is(completed.type, "response.completed");
  t.is(completed.response.usage.gw_credits, creditsOf(response.headers.get("x-request-id")));
  t.is(completed.response.usage.output_tokens, 3);
});

test.serial("a Messages stream says what it cost in message_delta's usage, from Anthropic natively and converted from a chat upstream", async (t) => {
  claudeUpstream.enqueue({ content: "native answer" });
  upstream.enqueue({ content: "converted answer", usage: { prompt_tokens: 9, completion_tokens: 4 } });
  for (const model of ["claude/claude-x", "compat/gpt-x"]) {
    const response = await fetch(`${gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model, max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const streamed = { status: response.status, headers: response.headers, text: await response.text() };
    t.is(streamed.status, 200);
    t.is(streamed.headers.get("x-gw-credits"), null);
    const events = dataFrames(streamed.text);
    const delta = events.find((event) => event.type === "message_delta")!;
    const credits = creditsOf(streamed.headers.get("x-request-id"));
    t.true(credits > 0);
    t.is(delta.usage.gw_credits, credits, model);
    t.true(delta.usage.output_tokens > 0, "the usage it already had is kept");
    t.is(events.at(-1)!.type, "message_stop");
    t.is(
      events
        .filter((event) => event.type === "content_block_delta")
        .map((event) => event.delta.text)
        .join(""),
      model.startsWith("claude/") ? "native answer" : "converted answer",
    );
  }
});

test.serial("a request refused after it was billed carries what it was charged on its error (the model call before a search it cannot pay)", async (t) => {
  const poorKey = await addKey(gateway.home, "poor", "pro", { budget: { credits: 15_999, period: "month" } });
  upstream.enqueue({
    toolCalls: [{ id: "call_1", name: "gw_web_search", arguments: JSON.stringify({ query: "news" }) }],
    usage: { prompt_tokens: 10, completion_tokens: 5 },
  });
  const refused = await post("/responses", { model: "compat/gpt-x", input: "news?", tools: [{ type: "web_search" }], max_output_tokens: 20 }, poorKey);
  t.is(refused.status, 402);
  const rows = rowsOf(refused.headers.get("x-request-id"));
  t.deepEqual(
    rows.map((row) => row.endpoint),
    ["responses"],
  );
  t.is(refused.headers.get("x-gw-credits"), String(rows[0]?.credits));
});

test.serial("a replayed stream (a cache hit) carries the hit's header: its row is written before the replay starts", async (t) => {
  const body = { model: "compat/gpt-x", temperature: 0, stream: true, messages: [{ role: "user", content: `cached stream ${Math.random()}` }] };
  const first = await post("/chat/completions", body, cachingKey);
  const second = await post("/chat/completions", body, cachingKey);
  t.is(first.headers.get("x-gw-credits"), null);
  t.is(second.headers.get("x-gw-cache"), "hit");
  t.is(second.headers.get("x-gw-credits"), "0");
  t.is(second.text, first.text);
});

test.serial("/mcp: the tool calls of one HTTP request, summed", async (t) => {
  const response = await fetch(`${gateway.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "web_search", arguments: { query: "mcp" } } }),
  });
  t.is(response.status, 200);
  const answer = (await response.json()) as { result?: { isError?: boolean } };
  t.falsy(answer.result?.isError, JSON.stringify(answer));
  t.is(response.headers.get("x-gw-credits"), String(creditsOf(response.headers.get("x-request-id"))));
});
