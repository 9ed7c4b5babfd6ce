// POST /v1/responses with the hosted `web_search` tool served by gw's own search providers
// (docs/decisions.md §19), through the official openai SDK against the fake OpenAI-compatible
// upstream and the fake Tavily: the model is offered a `gw_web_search` function, gw runs the
// searches it calls and calls the model again; the client sees `web_search_call` items (and, when
// streaming, their events), a summed usage, a `responses` row per model call and a `search` row
// per search.

import test from "ava";
import OpenAI from "openai";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { type FakeTavily, startFakeTavily, TAVILY_RESULTS } from "./fakes/tavily.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { namedEvents } from "./helpers/named-events.js";

const SEARCH_FUNCTION = "gw_web_search";
const TAVILY_KEY = "tvly-secret-key-789";
/** tavily/advanced's price per answered search (config/search-catalog-schema.ts). */
const SEARCH_CREDITS = 16000;

let openai: FakeOpenAI;
let tavily: FakeTavily;
let gateway: TestGateway;
let key: string;
let freeKey: string;

test.before(async () => {
  openai = await startFakeOpenAI();
  tavily = await startFakeTavily({ apiKey: TAVILY_KEY });
  const home = await makeHome((config) => {
    config.providers = {
      compat: { type: "openai", baseUrl: openai.url, apiKey: "sk-compat" },
      tavily: { type: "tavily", baseUrl: tavily.url, apiKey: TAVILY_KEY },
    };
    // Free plans reach the chat model but not the one search model (tavily/advanced is not free tier).
    config.routes = [{ prefix: "compat/", provider: "compat", priority: 10, freeTier: true }];
    config.models = [{ id: "compat/gpt-x", name: "GPT X", context_length: 100000, pricing: { input_per_mtok: 3, output_per_mtok: 15 } }];
    config.tools.search = { default: "tavily/advanced", allow: [] };
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "sam", "pro");
  freeKey = await addKey(home, "fay", "free");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await openai?.close();
  await tavily?.close();
});

test.beforeEach(() => {
  openai.reset();
  tavily.reset();
});

const client = (apiKey = key) => new OpenAI({ baseURL: gateway.v1, apiKey, maxRetries: 0 });
const allRows = () => UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date()));

const weather = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true,
};

const searchCall = (id: string, query: string) => ({ id, name: SEARCH_FUNCTION, arguments: JSON.stringify({ query }) });
const tavilyUrls = TAVILY_RESULTS.map((result) => result.url);

/** The round that searched, then the answer: what every test of one search enqueues. */
function enqueueSearchThenAnswer(answer: string): void {
  openai.enqueue(
    { toolCalls: [searchCall("call_s1", "rust release")], usage: { prompt_tokens: 10, completion_tokens: 5 } },
    { content: answer, usage: { prompt_tokens: 40, completion_tokens: 6 } },
  );
}

test.serial("create: the model's search runs on gw's provider, the second call reads the results, web_search_call then the message", async (t) => {
  enqueueSearchThenAnswer("Rust 1.99 is out.");
  const before = allRows().length;
  const { data: response, response: http } = await client()
    .responses.create({ model: "compat/gpt-x", input: "What is new in Rust?", tools: [{ type: "web_search" }, weather] })
    .withResponse();
  t.is(http.headers.get("x-service-tools-left-out"), null, "served, not left out");
  t.is(response.status, "completed");
  t.is(response.output_text, "Rust 1.99 is out.");
  t.deepEqual(
    response.output.map((item) => item.type),
    ["web_search_call", "message"],
  );
  const [search] = response.output;
  if (search?.type !== "web_search_call") return t.fail("no web_search_call item");
  t.regex(search.id, /^ws_[0-9a-f]{48}o0000$/);
  t.deepEqual(search, {
    type: "web_search_call",
    id: search.id,
    status: "completed",
    action: { type: "search", query: "rust release", queries: ["rust release"], sources: tavilyUrls.map((url) => ({ type: "url", url })) },
  });
  t.deepEqual(response.usage as unknown, {
    input_tokens: 50,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 11,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 61,
    // What the call was charged (docs/decisions.md §24): the search and both model calls (50 and 11 tokens at $3 and $15 per million).
    gw_credits: SEARCH_CREDITS + 50 * 3 + 11 * 15,
  });

  t.is(tavily.requests.length, 1);
  t.is(tavily.requests[0]!.json.query, "rust release");
  t.is(tavily.requests[0]!.json.search_depth, "advanced");
  t.is(openai.requests.length, 2);
  const [first, second] = openai.requests.map((request) => request.body);
  t.deepEqual(
    first.tools.map((tool: { function: { name: string } }) => tool.function.name),
    [SEARCH_FUNCTION, "get_weather"],
  );
  t.deepEqual(first.tools[0].function.parameters.required, ["query"]);
  t.deepEqual(second.messages.slice(0, 2), [
    { role: "user", content: "What is new in Rust?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_s1", type: "function", function: { name: SEARCH_FUNCTION, arguments: '{"query":"rust release"}' } }],
    },
  ]);
  const toolMessage = second.messages[2];
  t.is(toolMessage.role, "tool");
  t.is(toolMessage.tool_call_id, "call_s1");
  const results = JSON.parse(toolMessage.content);
  t.is(results.query, "rust release");
  t.deepEqual(results.results[0], {
    title: "Rust 1.99 released",
    url: "https://example.test/rust-1-99",
    snippet: "The Rust team announced Rust 1.99 & its new features.",
    published_date: "2026-01-01",
  });
  t.deepEqual(
    results.results.map((result: { url: string }) => result.url),
    tavilyUrls,
  );
  t.is(second.messages.length, 3);

  const rows = allRows().slice(before);
  t.deepEqual(
    rows.map((row) => row.endpoint),
    ["responses", "search", "responses"],
  );
  t.is(rows[0]!.credits, 10 * 3 + 5 * 15);
  t.like(rows[1], { model: "tavily/advanced", provider: "tavily", credits: SEARCH_CREDITS, units: { requests: 1, results: 3 } });
  t.is(rows[2]!.credits, 40 * 3 + 6 * 15);
  t.true(
    rows.every((row) => row.requestId === rows[0]!.requestId),
    "one request's rows",
  );

  const stored = await client().responses.retrieve(response.id);
  t.deepEqual(stored.output, response.output, "the stored response keeps the web_search_call");
});

test.serial("a continuation drops web_search_call items: previous_response_id and items sent back as input", async (t) => {
  enqueueSearchThenAnswer("Rust 1.99 is out.");
  const first = await client().responses.create({ model: "compat/gpt-x", input: "What is new in Rust?", tools: [{ type: "web_search_preview" }] });
  openai.enqueue({ content: "You asked about Rust." }, { content: "Still Rust." });
  await client().responses.create({ model: "compat/gpt-x", previous_response_id: first.id, input: "What did I ask?", tools: [{ type: "web_search_preview" }] });
  const expected = [
    { role: "user", content: "What is new in Rust?" },
    { role: "assistant", content: "Rust 1.99 is out." },
    { role: "user", content: "What did I ask?" },
  ];
  t.deepEqual(openai.requests.at(-1)!.body.messages, expected);
  // A stateless client (store: false) sends the output items back itself.
  await client().responses.create({
    model: "compat/gpt-x",
    store: false,
    input: [{ role: "user", content: "What is new in Rust?" }, ...(first.output as never[]), { role: "user", content: "What did I ask?" }],
  });
  t.deepEqual(openai.requests.at(-1)!.body.messages, expected);
});

test.serial("stream: the search's events, then the answer streamed, in one stream the SDK accumulates", async (t) => {
  enqueueSearchThenAnswer("Rust 1.99 is out.");
  const stream = client().responses.stream({ model: "compat/gpt-x", input: "What is new in Rust?", tools: [{ type: "web_search" }] });
  const types: string[] = [];
  const sequence: number[] = [];
  const deltas: string[] = [];
  const searching: string[] = [];
  stream.on("event", (event) => {
    types.push(event.type);
    sequence.push(event.sequence_number);
  });
  stream.on("response.output_text.delta", (event) => deltas.push(event.delta));
  stream.on("response.web_search_call.searching", (event) => searching.push(event.item_id));
  stream.on("response.output_item.added", (event) => {
    if (event.item.type === "web_search_call") t.is(event.item.status, "in_progress");
  });
  const final = await stream.finalResponse();
  t.deepEqual(
    sequence,
    sequence.map((_value, index) => index),
    "sequence numbers count up from 0 across the model calls",
  );
  t.deepEqual(types.slice(0, 9), [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.web_search_call.in_progress",
    "response.web_search_call.searching",
    "response.web_search_call.completed",
    "response.output_item.done",
    "response.output_item.added",
    "response.content_part.added",
  ]);
  t.deepEqual(types.slice(-4), ["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"]);
  t.true(types.slice(9, -4).every((type) => type === "response.output_text.delta"));
  t.is(deltas.join(""), "Rust 1.99 is out.");
  t.deepEqual(
    final.output.map((item) => item.type),
    ["web_search_call", "message"],
  );
  const [search] = final.output;
  if (search?.type !== "web_search_call") return t.fail("no web_search_call item");
  t.deepEqual(searching, [search.id]);
  t.like(search, { status: "completed", action: { type: "search", query: "rust release", sources: tavilyUrls.map((url) => ({ type: "url", url })) } });
  t.is(final.output_text, "Rust 1.99 is out.");
  t.like(final.usage, { input_tokens: 50, output_tokens: 11, total_tokens: 61 });
  t.is(tavily.requests[0]!.json.query, "rust release");
  t.is(openai.requests.length, 2);
  t.true(
    openai.requests.every((request) => request.body.stream === true),
    "every model call streamed",
  );
  t.is(openai.requests[1]!.body.messages[2].role, "tool");
  const stored = await client().responses.retrieve(final.id);
  t.deepEqual(
    stored.output.map((item) => item.type),
    ["web_search_call", "message"],
  );
  t.like(stored.usage, { input_tokens: 50, output_tokens: 11 });
});

test.serial("the bound: after 5 rounds that searched, the last call is made with tool_choice none", async (t) => {
  for (let round = 1; round <= 5; round++) openai.enqueue({ toolCalls: [searchCall(`call_${round}`, `query ${round}`)] });
  openai.enqueue({ content: "Enough searching." });
  const before = allRows().length;
  const response = await client().responses.create({ model: "compat/gpt-x", input: "Search a lot.", tools: [{ type: "web_search" }] });
  t.is(response.output_text, "Enough searching.");
  t.deepEqual(
    response.output.map((item) => item.type),
    ["web_search_call", "web_search_call", "web_search_call", "web_search_call", "web_search_call", "message"],
  );
  t.deepEqual(
    tavily.requests.map((request) => request.json.query),
    ["query 1", "query 2", "query 3", "query 4", "query 5"],
  );
  t.is(openai.requests.length, 6);
  t.deepEqual(
    openai.requests.map((request) => request.body.tool_choice),
    [undefined, undefined, undefined, undefined, undefined, "none"],
  );
  const rows = allRows().slice(before);
  t.is(rows.filter((row) => row.endpoint === "responses").length, 6);
  t.is(rows.filter((row) => row.endpoint === "search").length, 5);
});

test.serial("a round that also calls the client's function ends there: its search is not run, only the client's call is returned", async (t) => {
  openai.enqueue({ toolCalls: [searchCall("call_s", "oslo weather"), { id: "call_w", name: "get_weather", arguments: '{"city":"Oslo"}' }] });
  const response = await client().responses.create({ model: "compat/gpt-x", input: "Weather in Oslo?", tools: [{ type: "web_search" }, weather] });
  t.deepEqual(
    response.output.map((item) => (item.type === "function_call" ? item.name : item.type)),
    ["get_weather"],
  );
  t.is(tavily.requests.length, 0);
  t.is(openai.requests.length, 1);
});

test.serial("a search no provider could answer: a failed web_search_call, the model told, no search row", async (t) => {
  tavily.set({ status: 500 });
  openai.enqueue({ toolCalls: [searchCall("call_f", "rust release")] }, { content: "I could not search." });
  const before = allRows().length;
  const response = await client().responses.create({ model: "compat/gpt-x", input: "What is new in Rust?", tools: [{ type: "web_search" }] });
  t.is(response.output_text, "I could not search.");
  t.like(response.output[0], { type: "web_search_call", status: "failed", action: { type: "search", query: "rust release", sources: [] } });
  const toolMessage = openai.requests[1]!.body.messages[2];
  t.is(toolMessage.tool_call_id, "call_f");
  t.regex(toolMessage.content, /search failed/i);
  t.false(toolMessage.content.includes(TAVILY_KEY));
  t.deepEqual(
    allRows()
      .slice(before)
      .map((row) => row.endpoint),
    ["responses", "responses"],
  );
});

test.serial("a client function named like gw's search function is refused with a 400 when web_search is served", async (t) => {
  const clash = { ...weather, name: SEARCH_FUNCTION };
  const refused = await t.throwsAsync(client().responses.create({ model: "compat/gpt-x", input: "hi", tools: [{ type: "web_search" }, clash] }));
  t.is((refused as { status?: number }).status, 400);
  t.is((refused as { param?: string }).param, "tools[1].name");
  t.regex(refused!.message, /gw_web_search/);
  t.is(openai.requests.length, 0);
});

test.serial("a caller whose plan reaches no search model: web_search left out with the header, as without search", async (t) => {
  openai.enqueue({ content: "no search" });
  const { data, response } = await client(freeKey)
    .responses.create({ model: "compat/gpt-x", input: "hi", tools: [{ type: "web_search" }, weather] })
    .withResponse();
  t.is(data.output_text, "no search");
  t.is(response.headers.get("x-service-tools-left-out"), "web_search");
  t.deepEqual(
    openai.requests[0]!.body.tools.map((tool: { function: { name: string } }) => tool.function.name),
    ["get_weather"],
  );
  t.is(tavily.requests.length, 0);
});

test.serial("stream: a model call after the search that fails ends the stream with response.failed, the search item kept", async (t) => {
  openai.enqueue({ toolCalls: [searchCall("call_s1", "rust release")] }, { status: 400 });
  const response = await fetch(`${gateway.v1}/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "compat/gpt-x", input: "What is new in Rust?", tools: [{ type: "web_search" }], stream: true }),
  });
  t.is(response.status, 200);
  const text = await response.text();
  const { names: events, last: failed } = namedEvents(text);
  t.is(events.at(-1), "response.failed");
  t.true(events.includes("response.web_search_call.completed"));
  t.false(events.includes("response.completed"));
  t.is(failed.response.status, "failed");
  t.truthy(failed.response.error.code);
  t.like(failed.response.output[0], { type: "web_search_call", status: "completed" });
  t.is(tavily.requests.length, 1);
});

test.serial("a search the key's budget cannot pay for: 402, nothing searched, the model call before it billed", async (t) => {
  const poorKey = await addKey(gateway.home, "pia", "pro", { budget: { credits: SEARCH_CREDITS - 1, period: "month" } });
  openai.enqueue({ toolCalls: [searchCall("call_s1", "rust release")], usage: { prompt_tokens: 10, completion_tokens: 5 } });
  const before = allRows().length;
  const refused = await t.throwsAsync(
    client(poorKey).responses.create({ model: "compat/gpt-x", input: "What is new in Rust?", tools: [{ type: "web_search" }], max_output_tokens: 20 }),
  );
  t.is((refused as { status?: number }).status, 402);
  t.is(tavily.requests.length, 0);
  t.is(openai.requests.length, 1);
  t.deepEqual(
    allRows()
      .slice(before)
      .map((row) => row.endpoint),
    ["responses"],
  );
});
