// The official openai SDK's Responses API (responses.create, responses.stream) pointed at gw,
// routed to each kind of chat upstream (OpenAI-compatible, Anthropic, Gemini): the Response object
// and the stream events the SDK accumulates, tool loops, structured output, a failure mid-stream,
// hosted tools, and one usage row per call naming the `responses` endpoint.

import { existsSync, readdirSync, utimesSync } from "node:fs";
import path from "node:path";
import test from "ava";
import OpenAI from "openai";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import type { FakeAnthropic } from "./fakes/anthropic.js";
import type { FakeGemini } from "./fakes/gemini.js";
import type { FakeOpenAI } from "./fakes/openai.js";
import { type ChatVendors, startChatVendors } from "./helpers/chat-vendors.js";
import { addKey, type TestGateway } from "./helpers/gateway-harness.js";
import { namedEvents } from "./helpers/named-events.js";

let vendors: ChatVendors;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let openai: FakeOpenAI;
let gateway: TestGateway;
let key: string;
let freeKey: string;
let otherKey: string;
let home: string;

test.before(async () => {
  vendors = await startChatVendors();
  ({ anthropic, gemini, openai, gateway, home } = vendors);
  key = await addKey(home, "rita", "pro");
  freeKey = await addKey(home, "finn", "free");
  otherKey = await addKey(home, "oscar", "pro");
});

test.after.always(async () => {
  await vendors?.close();
});

test.beforeEach(() => vendors.reset());

const client = (apiKey = key) => new OpenAI({ baseURL: gateway.v1, apiKey, maxRetries: 0 });
const rows = () => UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "responses");

const weather = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true,
};

test.serial("create: a Response the SDK reads (output_text, usage, ids), the request converted to chat, one usage row", async (t) => {
  openai.enqueue({ content: "Hello from upstream", usage: { prompt_tokens: 12, completion_tokens: 4 } });
  const response = await client().responses.create({
    model: "compat/gpt-x",
    instructions: "Be brief.",
    input: "hello",
    max_output_tokens: 50,
    temperature: 0.5,
    user: "u-7",
  });
  t.regex(response.id, /^resp_[0-9a-f]{48}$/);
  t.is(response.object, "response");
  t.is(response.status, "completed");
  t.is(response.model, "compat/gpt-x");
  t.is(response.output_text, "Hello from upstream");
  t.is(response.output.length, 1);
  const message = response.output[0]!;
  t.is(message.type, "message");
  t.regex((message as { id: string }).id, /^msg_/);
  t.deepEqual(response.usage as unknown, {
    input_tokens: 12,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 4,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 16,
    // What the call was charged (docs/decisions.md §24): its row's credits.
    gw_credits: rows().at(-1)!.credits,
  });
  t.is(response.instructions, "Be brief.");
  t.is(response.max_output_tokens, 50);
  const sent = openai.requests.at(-1)!.body;
  t.is(sent.model, "gpt-x");
  t.deepEqual(sent.messages, [
    { role: "system", content: "Be brief." },
    { role: "user", content: "hello" },
  ]);
  t.is(sent.max_tokens, 50);
  t.is(sent.temperature, 0.5);
  t.is(sent.user, "u-7");
  t.false("instructions" in sent || "input" in sent || "max_output_tokens" in sent, "no Responses field reaches a chat upstream");
  const row = rows().at(-1)!;
  t.deepEqual(row.units, { prompt_tokens: 12, completion_tokens: 4 });
  t.is(row.credits, 12 * 3 + 4 * 15);
  t.is(row.model, "compat/gpt-x");
});

for (const target of [
  { name: "openai-compatible", model: "compat/gpt-x", reply: (text: string) => openai.enqueue({ content: text }) },
  { name: "anthropic", model: "claude/claude-sonnet-4-5", reply: (text: string) => anthropic.enqueue({ content: text }) },
  { name: "gemini", model: "google/gemini-2.5-flash", reply: (text: string) => gemini.enqueue({ content: text }) },
]) {
  test.serial(`stream over ${target.name}: the SDK accumulates the events into the final response`, async (t) => {
    target.reply("one two three");
    const stream = client().responses.stream({ model: target.model, input: [{ role: "user", content: [{ type: "input_text", text: "count" }] }] });
    const types: string[] = [];
    const sequence: number[] = [];
    const deltas: string[] = [];
    stream.on("event", (event) => {
      types.push(event.type);
      sequence.push(event.sequence_number);
    });
    stream.on("response.output_text.delta", (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    t.is(final.output_text, "one two three");
    t.is(deltas.join(""), "one two three");
    t.is(final.status, "completed");
    t.is(final.model, target.model);
    t.true(final.usage !== undefined && final.usage !== null && final.usage.output_tokens > 0, "usage on response.completed, always");
    t.deepEqual(
      sequence,
      sequence.map((_value, index) => index),
      "sequence numbers count up from 0",
    );
    t.deepEqual(types.slice(0, 4), ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]);
    t.deepEqual(types.slice(-4), ["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"]);
    t.true(types.slice(4, -4).every((type) => type === "response.output_text.delta"));
    t.is(rows().at(-1)!.model, target.model);
  });
}

test.serial("a tool loop: function_call out, function_call_output back in, converted both ways", async (t) => {
  openai.enqueue({ toolCalls: [{ id: "call_abc", name: "get_weather", arguments: '{"city":"Oslo"}' }] });
  const first = await client().responses.create({ model: "compat/gpt-x", input: "Weather in Oslo?", tools: [weather], tool_choice: "auto" });
  const call = first.output.find((item) => item.type === "function_call");
  if (call?.type !== "function_call") return t.fail("no function_call item");
  t.is(call.call_id, "call_abc");
  t.is(call.name, "get_weather");
  t.is(call.arguments, '{"city":"Oslo"}');
  t.regex(call.id ?? "", /^fc_/);
  const sentTools = openai.requests.at(-1)!.body.tools;
  t.deepEqual(sentTools, [
    { type: "function", function: { name: "get_weather", description: "The weather in a city", parameters: weather.parameters, strict: true } },
  ]);
  t.is(openai.requests.at(-1)!.body.tool_choice, "auto");

  openai.enqueue({ content: "It is sunny in Oslo." });
  const second = await client().responses.create({
    model: "compat/gpt-x",
    tools: [weather],
    input: [
      { role: "user", content: "Weather in Oslo?" },
      { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: "function_call_output", call_id: call.call_id, output: '{"sky":"sunny"}' },
    ],
  });
  t.is(second.output_text, "It is sunny in Oslo.");
  t.deepEqual(openai.requests.at(-1)!.body.messages, [
    { role: "user", content: "Weather in Oslo?" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_abc", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
    { role: "tool", tool_call_id: "call_abc", content: '{"sky":"sunny"}' },
  ]);
});

test.serial("a streamed tool call: function_call item with argument deltas, over a converted upstream (Anthropic)", async (t) => {
  anthropic.enqueue({ toolUses: [{ id: "toolu_1", name: "get_weather", input: { city: "Oslo" } }] });
  const stream = client().responses.stream({ model: "claude/claude-sonnet-4-5", input: "Weather in Oslo?", tools: [weather] });
  const argumentDeltas: string[] = [];
  stream.on("response.function_call_arguments.delta", (event) => argumentDeltas.push(event.delta));
  const final = await stream.finalResponse();
  const call = final.output.find((item) => item.type === "function_call");
  if (call?.type !== "function_call") return t.fail("no function_call item");
  t.is(call.call_id, "toolu_1");
  t.is(call.name, "get_weather");
  t.deepEqual(JSON.parse(call.arguments), { city: "Oslo" });
  t.is(argumentDeltas.join(""), call.arguments);
  t.is(call.status, "completed");
});

test.serial("structured output: text.format json_schema becomes response_format, strict kept", async (t) => {
  openai.enqueue({ content: '{"city":"Oslo"}' });
  const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
  const response = await client().responses.create({
    model: "compat/gpt-x",
    input: "Which city?",
    text: { format: { type: "json_schema", name: "answer", schema, strict: true } },
  });
  t.deepEqual(JSON.parse(response.output_text), { city: "Oslo" });
  t.deepEqual(openai.requests.at(-1)!.body.response_format, { type: "json_schema", json_schema: { name: "answer", schema, strict: true } });
  t.deepEqual(response.text?.format, { type: "json_schema", name: "answer", schema, strict: true });
});

test.serial("developer and assistant items, output_text parts and reasoning items map onto chat messages", async (t) => {
  openai.enqueue({ content: "ok" });
  await client().responses.create({
    model: "compat/gpt-x",
    input: [
      {
        role: "developer",
        content: [
          { type: "input_text", text: "Rule one. " },
          { type: "input_text", text: "Rule two." },
        ],
      },
      { role: "user", content: "hi" },
      { type: "reasoning", id: "rs_1", summary: [] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "hello", annotations: [] }], id: "msg_1", status: "completed" },
      { role: "user", content: [{ type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" }] },
    ],
    reasoning: { effort: "low" },
  });
  const sent = openai.requests.at(-1)!.body;
  t.deepEqual(sent.messages, [
    { role: "system", content: "Rule one. Rule two." },
    { role: "user", content: "hi" },
    { role: "assistant", content: "hello" },
    { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } }] },
  ]);
  t.is(sent.reasoning_effort, "low");
});

test.serial("an upstream that breaks after the first byte: the stream ends with response.failed, no other upstream's answer", async (t) => {
  openai.enqueue({ content: "a b c d e f", dropAfterChunks: 2 });
  const response = await fetch(`${gateway.v1}/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "compat/gpt-x", input: "go", stream: true }),
  });
  t.is(response.status, 200);
  t.regex(response.headers.get("content-type") ?? "", /^text\/event-stream/);
  const text = await response.text();
  const { names: events, last: failed } = namedEvents(text);
  t.is(events[0], "response.created");
  t.is(events.at(-1), "response.failed");
  t.false(events.includes("response.completed"));
  t.is(failed.response.status, "failed");
  t.is(failed.response.error.code, "stream_interrupted");
  t.is(openai.requests.length, 1, "no retry once the stream began");
});

test.serial("hosted tools: web_search and namespace are left out with a header; file_search is refused naming the type", async (t) => {
  openai.enqueue({ content: "fine" });
  const { data, response } = await client()
    .responses.create({
      model: "compat/gpt-x",
      input: "hi",
      tools: [weather, { type: "web_search" }, { type: "namespace", name: "multi_agent_v1", description: "agents", tools: [] } as never],
    })
    .withResponse();
  t.is(data.output_text, "fine");
  t.is(response.headers.get("x-service-tools-left-out"), "web_search, namespace");
  t.is(openai.requests.at(-1)!.body.tools.length, 1);

  const refused = await t.throwsAsync(
    client().responses.create({ model: "compat/gpt-x", input: "hi", tools: [{ type: "file_search", vector_store_ids: ["vs_1"] }] }),
  );
  t.is((refused as InstanceType<typeof OpenAI.BadRequestError>).status, 400);
  t.regex(refused!.message, /file_search/);
  t.is((refused as { param?: string }).param, "tools[0].type");
});

test.serial("bad requests: 400 naming the field; an unknown previous_response_id 404; plans and keys as chat", async (t) => {
  const post = (body: unknown, apiKey = key) =>
    fetch(`${gateway.v1}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const missing = await post({ model: "compat/gpt-x" });
  t.is(missing.status, 400);
  t.deepEqual((await missing.json()).error.param, "input");
  const badRole = await post({ model: "compat/gpt-x", input: [{ role: "tool", content: "x" }] });
  t.is(badRole.status, 400);
  t.is((await badRole.json()).error.param, "input[0].role");
  const chained = await post({ model: "compat/gpt-x", input: "x", previous_response_id: "resp_123" });
  t.is(chained.status, 404);
  t.like((await chained.json()).error, { param: "previous_response_id", code: "response_not_found" });
  const noKey = await post({ model: "compat/gpt-x", input: "x" }, "gw_wrong");
  t.is(noKey.status, 401);
  const free = await post({ model: "compat/gpt-x", input: "x" }, freeKey);
  t.is(free.status, 403);
  t.is(openai.requests.length, 0, "nothing refused reached the upstream");
});

const storedFiles = () => {
  const dir = path.join(homePaths(home).dataDir, "responses");
  return existsSync(dir) ? readdirSync(dir) : [];
};

test.serial("stored responses: retrieve, input_items, and previous_response_id continuing on another upstream kind", async (t) => {
  openai.enqueue({ content: "My name is Ada." });
  const first = await client().responses.create({ model: "compat/gpt-x", instructions: "Answer briefly.", input: "What is your name?" });
  t.is((first as { store?: boolean }).store, true);
  const retrieved = await client().responses.retrieve(first.id);
  // The create said what it was charged; the Response as stored, which a retrieve reads, does not (docs/decisions.md §24).
  const { gw_credits: charged, ...usage } = first.usage as unknown as Record<string, unknown>;
  t.is(typeof charged, "number");
  t.deepEqual(retrieved as unknown, { ...first, output_text: retrieved.output_text, usage });
  t.is(retrieved.output_text, "My name is Ada.");
  const items = await client().responses.inputItems.list(first.id);
  t.is(items.data.length, 1);
  t.like(items.data[0], { type: "message", role: "user", content: [{ type: "input_text", text: "What is your name?" }] });

  anthropic.enqueue({ content: "You asked my name." });
  const second = await client().responses.create({ model: "claude/claude-sonnet-4-5", previous_response_id: first.id, input: "What did I ask?" });
  t.is(second.output_text, "You asked my name.");
  t.is(second.previous_response_id, first.id);
  const sent = anthropic.requests.at(-1)!.body;
  t.is(sent.system, undefined, "instructions are not carried over to the next response, as OpenAI does");
  t.deepEqual(
    sent.messages.map((message: { role: string }) => message.role),
    ["user", "assistant", "user"],
  );
  t.true(JSON.stringify(sent.messages[0]).includes("What is your name?"));
  t.true(JSON.stringify(sent.messages[1]).includes("My name is Ada."));
  t.true(JSON.stringify(sent.messages[2]).includes("What did I ask?"));
  const all = await client().responses.inputItems.list(second.id, { order: "asc" });
  t.deepEqual(
    all.data.map((item) => (item as { role?: string }).role),
    ["user", "assistant", "user"],
    "the second response's input items are the whole conversation it answered",
  );
  const listed = (query: string) =>
    fetch(`${gateway.v1}/responses/${second.id}/input_items?${query}`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json());
  const page = await listed("order=asc&limit=2");
  t.like(page, { object: "list", has_more: true, first_id: all.data[0]!.id, last_id: all.data[1]!.id });
  t.is(page.data.length, 2);
  const rest = await listed(`order=asc&limit=2&after=${page.last_id}`);
  t.like(rest, { has_more: false, first_id: all.data[2]!.id, last_id: all.data[2]!.id });
  const newest = await listed("limit=1");
  t.is(newest.data[0].id, all.data[2]!.id, "newest first by default");
});

test.serial("stored responses are the agent's: another agent's key gets 404 exactly as for a missing id; DELETE removes", async (t) => {
  openai.enqueue({ content: "secret answer" });
  const mine = await client().responses.create({ model: "compat/gpt-x", input: "hi" });
  const missing = `resp_${"0".repeat(48)}`;
  for (const id of [mine.id, missing]) {
    const error = await t.throwsAsync(client(otherKey).responses.retrieve(id));
    t.is((error as { status?: number }).status, 404);
    t.is(error!.message, `404 Response with id '${id}' not found.`);
  }
  const chained = await t.throwsAsync(client(otherKey).responses.create({ model: "compat/gpt-x", input: "x", previous_response_id: mine.id }));
  t.is((chained as { status?: number }).status, 404);
  t.is(((await t.throwsAsync(client(otherKey).responses.delete(mine.id))) as { status?: number }).status, 404);
  t.is(((await t.throwsAsync(client(otherKey).responses.inputItems.list(mine.id))) as { status?: number }).status, 404);
  t.is(openai.requests.length, 1, "the refused chain reached no upstream");

  const deleted = await fetch(`${gateway.v1}/responses/${mine.id}`, { method: "DELETE", headers: { authorization: `Bearer ${key}` } });
  t.deepEqual(await deleted.json(), { id: mine.id, object: "response.deleted", deleted: true });
  t.is(((await t.throwsAsync(client().responses.retrieve(mine.id))) as { status?: number }).status, 404);
  t.false(storedFiles().includes(`${mine.id}.json`));
});

test.serial("store: false keeps nothing; a streamed response is stored and continues", async (t) => {
  const before = storedFiles().length;
  openai.enqueue({ content: "not kept" });
  const unkept = await client().responses.create({ model: "compat/gpt-x", input: "hi", store: false });
  t.is((unkept as { store?: boolean }).store, false);
  t.is(storedFiles().length, before);
  t.is(((await t.throwsAsync(client().responses.retrieve(unkept.id))) as { status?: number }).status, 404);

  gemini.enqueue({ content: 'streamed "and" kept\n— ✓ \\u0041' });
  const streamed = await client().responses.stream({ model: "google/gemini-2.5-flash", input: "stream it" }).finalResponse();
  const kept = await client().responses.retrieve(streamed.id);
  t.is(kept.output_text, 'streamed "and" kept\n— ✓ \\u0041');
  t.is(kept.status, "completed");
  // The SDK adds its parsed fields to what the stream carried.
  const { output_parsed: _parsed, ...carried } = streamed as typeof streamed & { output_parsed?: unknown };
  const parts = (response: { output: unknown[] }) => JSON.stringify(response.output).replaceAll(',"parsed":null', "");
  t.is(parts(carried), parts(kept), "the stored response's output is the one response.completed carried");
  t.deepEqual({ ...carried, output: [] }, { ...kept, output: [] }, "and so is the rest of it");
  openai.enqueue({ content: "continued" });
  await client().responses.create({ model: "compat/gpt-x", previous_response_id: streamed.id, input: "and then?" });
  t.deepEqual(openai.requests.at(-1)!.body.messages, [
    { role: "user", content: "stream it" },
    { role: "assistant", content: 'streamed "and" kept\n— ✓ \\u0041' },
    { role: "user", content: "and then?" },
  ]);
});

test.serial("item_reference: a function_call from a stored response is read back by its id", async (t) => {
  openai.enqueue({ toolCalls: [{ id: "call_ref", name: "get_weather", arguments: '{"city":"Rome"}' }] });
  const first = await client().responses.create({ model: "compat/gpt-x", input: "Weather in Rome?", tools: [weather] });
  const call = first.output.find((item) => item.type === "function_call")!;
  openai.enqueue({ content: "Warm." });
  await client().responses.create({
    model: "compat/gpt-x",
    tools: [weather],
    input: [
      { role: "user", content: "Weather in Rome?" },
      { type: "item_reference", id: call.id! },
      { type: "function_call_output", call_id: "call_ref", output: "warm" },
    ],
  });
  t.deepEqual(openai.requests.at(-1)!.body.messages[1], {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call_ref", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } }],
  });
  const unknown = await t.throwsAsync(
    client().responses.create({ model: "compat/gpt-x", input: [{ type: "item_reference", id: `fc_${"1".repeat(48)}o0000` }] }),
  );
  t.is((unknown as { status?: number }).status, 404);
  t.is((unknown as { param?: string }).param, "input[0].id");
});

test.serial("retention: stored responses older than responses.retentionDays are pruned", async (t) => {
  openai.enqueue({ content: "old" });
  const old = await client().responses.create({ model: "compat/gpt-x", input: "hi" });
  openai.enqueue({ content: "new" });
  const recent = await client().responses.create({ model: "compat/gpt-x", input: "hi" });
  const file = path.join(homePaths(home).dataDir, "responses", `${old.id}.json`);
  const longAgo = new Date(Date.now() - 31 * 24 * 3600 * 1000);
  utimesSync(file, longAgo, longAgo);
  t.true((await gateway.gateway.responses.prune(gateway.gateway.config.responses.retentionDays)) >= 1);
  t.is(((await t.throwsAsync(client().responses.retrieve(old.id))) as { status?: number }).status, 404);
  t.is((await client().responses.retrieve(recent.id)).output_text, "new");
});
