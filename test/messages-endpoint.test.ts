// The official @anthropic-ai/sdk pointed at gw (baseURL = gw + /anthropic): native to an
// Anthropic upstream, converted to OpenAI-compatible and Gemini upstreams, streams included;
// every error in Anthropic's shape; billed like chat completions.

import Anthropic from "@anthropic-ai/sdk";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import type { FakeAnthropic } from "./fakes/anthropic.js";
import type { FakeGemini } from "./fakes/gemini.js";
import type { FakeOpenAI } from "./fakes/openai.js";
import { type ChatVendors, startChatVendors } from "./helpers/chat-vendors.js";
import { addKey, type TestGateway } from "./helpers/gateway-harness.js";

let vendors: ChatVendors;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let openai: FakeOpenAI;
let gateway: TestGateway;
let key: string;
let freeKey: string;

const weatherTool = {
  name: "get_weather",
  description: "Weather by city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
};

test.before(async () => {
  vendors = await startChatVendors();
  ({ anthropic, gemini, openai, gateway } = vendors);
  key = await addKey(vendors.home, "ann", "pro");
  freeKey = await addKey(vendors.home, "fay", "free");
});

test.after.always(async () => {
  await vendors?.close();
});

test.beforeEach(() => vendors.reset());

const sdk = (apiKey = key) => new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey, maxRetries: 0 });
/** The `error.type` of the Anthropic error body the SDK surfaced. */
function errorType(error: unknown): unknown {
  return (error as { error?: { error?: { type?: unknown } } }).error?.error?.type;
}

const rows = () => UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date()));

test.serial("native: the request reaches Anthropic as sent, the answer comes back unchanged but for the model", async (t) => {
  anthropic.enqueue({ content: "Hi!", usage: { input_tokens: 20, output_tokens: 5, cache_read_input_tokens: 7 } });
  const message = await sdk().messages.create(
    {
      model: "claude/claude-sonnet-4-5",
      max_tokens: 300,
      system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
      metadata: { user_id: "u-1" },
      stop_sequences: ["END"],
      tools: [weatherTool],
      tool_choice: { type: "auto" },
    },
    { headers: { "anthropic-beta": "prompt-caching-2024-07-31" } },
  );
  t.is(message.type, "message");
  t.is(message.model, "claude/claude-sonnet-4-5");
  t.is((message.content[0] as { text: string }).text, "Hi!");
  t.is(message.stop_reason, "end_turn");
  t.is(message.usage.input_tokens, 20);
  const sent = anthropic.requests.at(-1)!;
  t.is(sent.body.model, "claude-sonnet-4-5");
  t.deepEqual(sent.body.system, [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }]);
  t.deepEqual(sent.body.metadata, { user_id: "u-1" });
  t.deepEqual(sent.body.stop_sequences, ["END"]);
  t.deepEqual(sent.body.tools, [weatherTool]);
  t.is(sent.headers["anthropic-beta"], "prompt-caching-2024-07-31");
  t.regex(String(sent.headers["anthropic-version"]), /^\d{4}-\d{2}-\d{2}$/, "the client's anthropic-version is forwarded");
  t.is(sent.headers["x-api-key"], "sk-ant-upstream");
  const row = rows().at(-1)!;
  t.is(row.endpoint, "messages");
  t.deepEqual(row.units, { prompt_tokens: 27, completion_tokens: 5, cached_tokens: 7 });
});

test.serial("native stream: messages.stream() and finalMessage(), events relayed unchanged", async (t) => {
  anthropic.enqueue({ content: "one two three", usage: { input_tokens: 11, output_tokens: 3 } });
  const stream = sdk().messages.stream({ model: "claude/claude-sonnet-4-5", max_tokens: 100, messages: [{ role: "user", content: "count" }] });
  const texts: string[] = [];
  stream.on("text", (text) => texts.push(text));
  const final = await stream.finalMessage();
  t.is(texts.join(""), "one two three");
  t.is(final.model, "claude/claude-sonnet-4-5");
  t.is((final.content[0] as { text: string }).text, "one two three");
  t.is(final.stop_reason, "end_turn");
  t.is(final.usage.output_tokens, 3);
  t.is(anthropic.requests.at(-1)!.body.stream, true);
  t.deepEqual(rows().at(-1)!.units, { prompt_tokens: 11, completion_tokens: 3 });
});

for (const target of [
  {
    name: "native anthropic",
    model: "claude/claude-sonnet-4-5",
    reply: () => anthropic.enqueue({ toolUses: [{ id: "toolu_1", name: "get_weather", input: { city: "Oslo" } }] }),
  },
  {
    name: "openai-compatible",
    model: "compat/gpt-x",
    reply: () => openai.enqueue({ toolCalls: [{ id: "toolu_1", name: "get_weather", arguments: '{"city":"Oslo"}' }] }),
  },
  {
    name: "gemini",
    model: "google/gemini-2.5-flash",
    reply: () => gemini.enqueue({ functionCalls: [{ name: "get_weather", args: { city: "Oslo" } }] } as never),
  },
]) {
  test.serial(`${target.name}: a tool-use round trip through messages.stream()`, async (t) => {
    target.reply();
    const first = await sdk()
      .messages.stream({ model: target.model, max_tokens: 200, tools: [weatherTool], messages: [{ role: "user", content: "Weather in Oslo?" }] })
      .finalMessage();
    t.is(first.stop_reason, "tool_use");
    const use = first.content.find((block) => block.type === "tool_use") as { id: string; name: string; input: unknown };
    t.is(use.name, "get_weather");
    t.deepEqual(use.input, { city: "Oslo" });
    const second = await sdk().messages.create({
      model: target.model,
      max_tokens: 200,
      tools: [weatherTool],
      messages: [
        { role: "user", content: "Weather in Oslo?" },
        { role: "assistant", content: first.content as never },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "4°C, cloudy" }] },
      ],
    });
    t.is(second.type, "message");
    t.is(second.model, target.model);
    t.true(second.content.some((block) => block.type === "text"));
  });
}

for (const target of [
  { name: "openai-compatible", model: "compat/gpt-x", last: () => openai.requests.at(-1)!.body },
  { name: "gemini", model: "google/gemini-2.5-flash", last: () => gemini.requests.at(-1)!.body },
]) {
  test.serial(`${target.name}: create and stream are converted both ways`, async (t) => {
    const message = await sdk().messages.create({
      model: target.model,
      max_tokens: 64,
      system: "Be brief.",
      messages: [{ role: "user", content: "hello world" }],
    });
    t.is(message.type, "message");
    t.is(message.model, target.model);
    t.is((message.content[0] as { text: string }).text, "echo: hello world");
    t.is(message.stop_reason, "end_turn");
    t.true(message.usage.input_tokens > 0 && message.usage.output_tokens > 0);
    t.truthy(target.last());
    const stream = sdk().messages.stream({ model: target.model, max_tokens: 64, messages: [{ role: "user", content: "streamed words here" }] });
    const events: string[] = [];
    stream.on("streamEvent", (event) => events.push(event.type));
    const final = await stream.finalMessage();
    t.is((final.content[0] as { text: string }).text, "echo: streamed words here");
    t.is(events[0], "message_start");
    t.true(events.includes("content_block_delta"));
    t.deepEqual(events.slice(-2), ["message_delta", "message_stop"]);
    t.true(final.usage.output_tokens > 0);
  });
}

test.serial("converted stream: a text delta reaches the client while the upstream is still holding the next chunk", async (t) => {
  openai.enqueue({ holdAfterEvents: 2 });
  const safety = setTimeout(() => openai.releaseHeld(), 5_000);
  try {
    const stream = sdk().messages.stream({ model: "compat/gpt-x", max_tokens: 64, messages: [{ role: "user", content: "one two three" }] });
    const heldWhenReceived: number[] = [];
    stream.on("text", () => {
      if (heldWhenReceived.length > 0) return;
      heldWhenReceived.push(openai.held());
      openai.releaseHeld();
    });
    const final = await stream.finalMessage();
    t.deepEqual(heldWhenReceived, [1], "the first text delta arrived before the upstream sent the next chunk");
    t.is((final.content[0] as { text: string }).text, "echo: one two three");
  } finally {
    clearTimeout(safety);
  }
});

test.serial("billing is the same whichever upstream kind served the call", async (t) => {
  const before = rows().length;
  anthropic.enqueue({ usage: { input_tokens: 10, output_tokens: 4 } });
  await sdk().messages.create({ model: "claude/claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "a" }] });
  openai.enqueue({ usage: { prompt_tokens: 10, completion_tokens: 4 } });
  await sdk().messages.create({ model: "compat/gpt-x", max_tokens: 10, messages: [{ role: "user", content: "a" }] });
  const added = rows().slice(before);
  t.is(added.length, 2);
  t.deepEqual(
    added.map((row) => row.units),
    [
      { prompt_tokens: 10, completion_tokens: 4 },
      { prompt_tokens: 10, completion_tokens: 4 },
    ],
  );
  t.is(added[0]!.credits, added[1]!.credits);
  t.is(added[0]!.credits, 10 * 3 + 4 * 15);
});

test.serial("missing model, max_tokens or messages: 400 invalid_request_error naming the field", async (t) => {
  const base = { model: "claude/claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "x" }] };
  for (const field of ["model", "max_tokens", "messages"] as const) {
    const body: Record<string, unknown> = { ...base };
    delete body[field];
    const response = await fetch(`${gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify(body),
    });
    t.is(response.status, 400);
    t.deepEqual(await response.json(), { type: "error", error: { type: "invalid_request_error", message: `${field}: Field required` } });
  }
  const error = await t.throwsAsync(sdk().messages.create({ model: "claude/claude-sonnet-4-5", messages: [{ role: "user", content: "x" }] } as never), {
    instanceOf: Anthropic.BadRequestError,
  });
  t.is(errorType(error), "invalid_request_error");
  t.is(anthropic.requests.length, 0);
});

test.serial("every gateway error uses Anthropic's shape and usual status", async (t) => {
  const ask = (apiKey: string, model: string) => sdk(apiKey).messages.create({ model, max_tokens: 10, messages: [{ role: "user", content: "x" }] });
  const unauthorized = await t.throwsAsync(ask("gw_nope", "claude/claude-sonnet-4-5"), { instanceOf: Anthropic.AuthenticationError });
  t.deepEqual((unauthorized as InstanceType<typeof Anthropic.APIError>).error, {
    type: "error",
    error: { type: "authentication_error", message: "Invalid API key. Send a valid gw key in the `x-api-key` header." },
  });
  const missing = await t.throwsAsync(ask(key, "nobody/model"), { instanceOf: Anthropic.NotFoundError });
  t.is(errorType(missing), "not_found_error");
  const upgrade = await t.throwsAsync(ask(freeKey, "claude/claude-sonnet-4-5"), { instanceOf: Anthropic.PermissionDeniedError });
  t.is(errorType(upgrade), "permission_error");
  const notJson = await fetch(`${gateway.url}/anthropic/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "text/plain" },
    body: "hi",
  });
  t.is(notJson.status, 415);
  t.is(((await notJson.json()) as { type: string }).type, "error");
  const nowhere = await fetch(`${gateway.url}/anthropic/v1/nothing`, { method: "POST" });
  t.is(nowhere.status, 404);
  t.deepEqual(((await nowhere.json()) as { error: { type: string } }).error.type, "not_found_error");
});

test.serial("an Anthropic error about a value comes back verbatim with its status", async (t) => {
  const vendor = { type: "error", error: { type: "invalid_request_error", message: "messages: text content blocks must be non-empty" }, request_id: "req_x" };
  anthropic.enqueue({ status: 400, errorBody: vendor });
  const response = await fetch(`${gateway.url}/anthropic/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ model: "claude/claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "x" }] }),
  });
  t.is(response.status, 400);
  t.deepEqual(await response.json(), vendor);
  openai.enqueue({ status: 400, errorBody: { error: { message: "bad value", type: "invalid_request_error", param: null, code: null } } });
  const converted = await t.throwsAsync(sdk().messages.create({ model: "compat/gpt-x", max_tokens: 10, messages: [{ role: "user", content: "x" }] }), {
    instanceOf: Anthropic.BadRequestError,
  });
  t.deepEqual((converted as InstanceType<typeof Anthropic.APIError>).error, { type: "error", error: { type: "invalid_request_error", message: "bad value" } });
});

test.serial("a failure after the stream started arrives as the native error event", async (t) => {
  anthropic.enqueue({ content: "a b c d e f", streamError: { type: "overloaded_error", message: "Overloaded", afterChunks: 2 } });
  const stream = sdk().messages.stream({ model: "claude/claude-sonnet-4-5", max_tokens: 100, messages: [{ role: "user", content: "x" }] });
  const error = await t.throwsAsync(stream.finalMessage());
  t.regex(String(error?.message), /Overloaded|overloaded/);
  openai.enqueue({ dropAfterChunks: 2 });
  const converted = sdk().messages.stream({ model: "compat/gpt-x", max_tokens: 100, messages: [{ role: "user", content: "one two three four" }] });
  await t.throwsAsync(converted.finalMessage());
});
