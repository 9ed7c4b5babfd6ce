// Pure converters between OpenAI chat completions and Anthropic Messages, with the edge cases
// of reference/anthropic-messages.md §D, asserted by plain equality.
import test from "ava";
import { fromAnthropicHttpError, fromAnthropicStreamError } from "../src/providers/anthropic/anthropic-error.js";
import { hasFixedSampling } from "../src/providers/anthropic/anthropic-model-rules.js";
import { AnthropicStreamConverter, convertAnthropicUsage, convertFromAnthropicChat } from "../src/providers/anthropic/convert-from-anthropic-chat.js";
import { convertToAnthropicChat } from "../src/providers/anthropic/convert-to-anthropic-chat.js";
import { mapAnthropicFinishReason } from "../src/providers/anthropic/map-anthropic-finish-reason.js";
import type { ChatRequest } from "../src/providers/chat-types.js";
import { UnsupportedContentError, UpstreamHttpError } from "../src/providers/provider-errors.js";

const model = "claude-sonnet-4-5";
const chat = (messages: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): ChatRequest => ({ model, messages, ...extra });

test("system and developer messages are hoisted into `system`; max_tokens defaults to 4096", (t) => {
  const body = convertToAnthropicChat(
    chat([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hi" },
      { role: "developer", content: [{ type: "text", text: "Use metric units." }] },
    ]),
  );
  t.deepEqual(body, {
    model,
    max_tokens: 4096,
    system: "Be brief.\n\nUse metric units.",
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  });
});

test("max_completion_tokens wins over max_tokens; a configured default applies when neither is sent", (t) => {
  t.is(convertToAnthropicChat(chat([{ role: "user", content: "x" }], { max_tokens: 100, max_completion_tokens: 200 })).max_tokens, 200);
  t.is(convertToAnthropicChat(chat([{ role: "user", content: "x" }], { max_tokens: 100, max_completion_tokens: null })).max_tokens, 100);
  t.is(convertToAnthropicChat(chat([{ role: "user", content: "x" }]), { defaultMaxTokens: 1234 }).max_tokens, 1234);
});

test("consecutive same-role messages merge; empty text is dropped; an empty assistant message disappears", (t) => {
  const body = convertToAnthropicChat(
    chat([
      { role: "user", content: "one" },
      {
        role: "user",
        content: [
          { type: "text", text: "" },
          { type: "text", text: "two" },
        ],
      },
      { role: "assistant", content: "" },
      { role: "user", content: "three" },
    ]),
  );
  t.deepEqual(body.messages, [
    {
      role: "user",
      content: [
        { type: "text", text: "one" },
        { type: "text", text: "two" },
        { type: "text", text: "three" },
      ],
    },
  ]);
});

test("tool calls become tool_use blocks; tool messages merge into one user turn, results first", (t) => {
  const body = convertToAnthropicChat(
    chat([
      { role: "user", content: "Weather in Oslo and Bergen?" },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
          { id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Bergen"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "4°C" },
      { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "6°C" }] },
      { role: "user", content: "And tomorrow?" },
    ]),
  );
  t.deepEqual(body.messages, [
    { role: "user", content: [{ type: "text", text: "Weather in Oslo and Bergen?" }] },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Oslo" } },
        { type: "tool_use", id: "call_2", name: "get_weather", input: { city: "Bergen" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "call_1", content: "4°C" },
        { type: "tool_result", tool_use_id: "call_2", content: "6°C" },
        { type: "text", text: "And tomorrow?" },
      ],
    },
  ]);
});

test("an empty tool result leaves content out; content:null with tool_calls gives only tool_use", (t) => {
  const body = convertToAnthropicChat(
    chat([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "" } }] },
      { role: "tool", tool_call_id: "c", content: "" },
    ]),
  );
  t.deepEqual(body.messages.slice(1), [
    { role: "assistant", content: [{ type: "tool_use", id: "c", name: "f", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "c" }] },
  ]);
});

test("invalid tool-call arguments are refused, not guessed", (t) => {
  const error = t.throws(
    () =>
      convertToAnthropicChat(
        chat([
          { role: "user", content: "x" },
          { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{oops" } }] },
        ]),
      ),
    { instanceOf: UnsupportedContentError },
  );
  t.is(error!.param, "messages[1].tool_calls[0].function.arguments");
});

test("images: data: URLs become base64 sources, https URLs url sources, other types are refused", (t) => {
  const body = convertToAnthropicChat(
    chat([
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/AAAA", detail: "high" } },
          { type: "image_url", image_url: { url: "https://example.test/cat.png" } },
        ],
      },
    ]),
  );
  t.deepEqual(body.messages[0]!.content, [
    { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/AAAA" } },
    { type: "image", source: { type: "url", url: "https://example.test/cat.png" } },
  ]);
  const error = t.throws(
    () => convertToAnthropicChat(chat([{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/bmp;base64,Qk0=" } }] }])),
    {
      instanceOf: UnsupportedContentError,
    },
  );
  t.is(error!.param, "messages[0].content[0]");
  t.throws(() => convertToAnthropicChat(chat([{ role: "user", content: [{ type: "input_audio", input_audio: { data: "x", format: "wav" } }] }])), {
    instanceOf: UnsupportedContentError,
  });
});

test("stop becomes stop_sequences; whitespace-only sequences are left out", (t) => {
  t.deepEqual(convertToAnthropicChat(chat([{ role: "user", content: "x" }], { stop: "END" })).stop_sequences, ["END"]);
  t.deepEqual(convertToAnthropicChat(chat([{ role: "user", content: "x" }], { stop: ["\n", "###", ""] })).stop_sequences, ["###"]);
  t.false("stop_sequences" in convertToAnthropicChat(chat([{ role: "user", content: "x" }], { stop: null })));
});

test("temperature is clamped to 1; top_p goes only without temperature; newer models get none of them", (t) => {
  const classic = convertToAnthropicChat(chat([{ role: "user", content: "x" }], { temperature: 1.6, top_p: 0.5, top_k: 40 }));
  t.deepEqual([classic.temperature, classic.top_p, classic.top_k], [1, undefined, 40]);
  t.is(convertToAnthropicChat(chat([{ role: "user", content: "x" }], { top_p: 0.5 })).top_p, 0.5);
  const newer = convertToAnthropicChat({ model: "claude-opus-4-7", messages: [{ role: "user", content: "x" }], temperature: 0.2, top_p: 0.5, top_k: 5 });
  t.deepEqual([newer.temperature, newer.top_p, newer.top_k], [undefined, undefined, undefined]);
});

test("model rules: versions above 4.6 in the current naming have fixed sampling", (t) => {
  const fixed = ["claude-opus-4-7", "claude-sonnet-5", "claude-haiku-5-1-20270101", "claude-opus-4-10"];
  const classic = ["claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-sonnet-4-20250514", "claude-3-5-sonnet-20241022", "claude-opus-4-1", "gpt-4o"];
  t.deepEqual(
    fixed.map(hasFixedSampling),
    fixed.map(() => true),
  );
  t.deepEqual(
    classic.map(hasFixedSampling),
    classic.map(() => false),
  );
});

test("tools, tool_choice and parallel_tool_calls", (t) => {
  const tools = [
    { type: "function", function: { name: "f", description: "d", parameters: { type: "object", properties: { a: { type: "string" } } } } },
    { type: "function", function: { name: "g" } },
  ];
  const body = convertToAnthropicChat(chat([{ role: "user", content: "x" }], { tools, tool_choice: "required", parallel_tool_calls: false }));
  t.deepEqual(body.tools, [
    { name: "f", description: "d", input_schema: { type: "object", properties: { a: { type: "string" } } } },
    { name: "g", input_schema: { type: "object", properties: {} } },
  ]);
  t.deepEqual(body.tool_choice, { type: "any", disable_parallel_tool_use: true });
  const choice = (tool_choice: unknown, parallel?: boolean) =>
    convertToAnthropicChat(chat([{ role: "user", content: "x" }], { tools, tool_choice, parallel_tool_calls: parallel })).tool_choice;
  t.deepEqual(choice("auto"), { type: "auto" });
  t.deepEqual(choice("none"), { type: "none" });
  t.deepEqual(choice({ type: "function", function: { name: "g" } }), { type: "tool", name: "g" });
  t.deepEqual(choice(undefined, false), { type: "auto", disable_parallel_tool_use: true });
  t.is(choice(undefined), undefined);
  t.false("tool_choice" in convertToAnthropicChat(chat([{ role: "user", content: "x" }], { tool_choice: "auto" })));
});

test("leading assistant gets a user turn before it; trailing assistant is prefill, trimmed or dropped for newer models", (t) => {
  const leading = convertToAnthropicChat(
    chat([
      { role: "assistant", content: "Hello! How can I help?" },
      { role: "user", content: "hi" },
    ]),
  );
  t.deepEqual(
    leading.messages.map((message) => message.role),
    ["user", "assistant", "user"],
  );
  const prefill = convertToAnthropicChat(
    chat([
      { role: "user", content: "JSON please" },
      { role: "assistant", content: "{ " },
    ]),
  );
  t.deepEqual(prefill.messages[1], { role: "assistant", content: [{ type: "text", text: "{" }] });
  const newer = convertToAnthropicChat({
    model: "claude-sonnet-5",
    messages: [
      { role: "user", content: "JSON please" },
      { role: "assistant", content: "{" },
    ],
  });
  t.deepEqual(
    newer.messages.map((message) => message.role),
    ["user"],
  );
});

test("refusals: system-only requests, n > 1, json_schema, non-function tools", (t) => {
  t.throws(() => convertToAnthropicChat(chat([{ role: "system", content: "only this" }])), { instanceOf: UnsupportedContentError });
  t.throws(() => convertToAnthropicChat(chat([{ role: "user", content: "x" }], { n: 2 })), { instanceOf: UnsupportedContentError });
  t.throws(
    // A json_schema answer is a tool's input, which is an object (provider-translations.test.ts has the mapping).
    () =>
      convertToAnthropicChat(
        chat([{ role: "user", content: "x" }], { response_format: { type: "json_schema", json_schema: { name: "a", schema: { type: "array" } } } }),
      ),
    {
      instanceOf: UnsupportedContentError,
    },
  );
  t.throws(() => convertToAnthropicChat(chat([{ role: "user", content: "x" }], { tools: [{ type: "custom", custom: { name: "x" } }] })), {
    instanceOf: UnsupportedContentError,
  });
});

test("OpenAI-only parameters are not sent; user becomes metadata.user_id", (t) => {
  const body = convertToAnthropicChat(
    chat([{ role: "user", content: "x" }], {
      seed: 1,
      presence_penalty: 0.5,
      frequency_penalty: 0.5,
      logprobs: true,
      logit_bias: {},
      stream_options: { include_usage: true },
      user: "u-1",
    }),
  );
  t.deepEqual(body, { model, max_tokens: 4096, messages: [{ role: "user", content: [{ type: "text", text: "x" }] }], metadata: { user_id: "u-1" } });
});

test("response: text and tool_use blocks, thinking dropped, usage with cache tokens", (t) => {
  const completion = convertFromAnthropicChat(
    {
      id: "msg_01",
      model: "claude-sonnet-4-5-20250929",
      content: [
        { type: "thinking", text: undefined },
        { type: "text", text: "Let me " },
        { type: "text", text: "check." },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 3, cache_read_input_tokens: 100 },
    },
    model,
    1_700_000_000,
  );
  t.deepEqual(completion, {
    id: "msg_01",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "claude-sonnet-4-5-20250929",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: "Let me check.",
          refusal: null,
          tool_calls: [{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
        },
        logprobs: null,
        finish_reason: "tool_calls",
      },
    ],
    usage: { prompt_tokens: 113, completion_tokens: 5, total_tokens: 118, prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 3 } },
  });
});

test("finish reasons and null usage fields", (t) => {
  const reasons = ["end_turn", "stop_sequence", "max_tokens", "model_context_window_exceeded", "tool_use", "refusal", "pause_turn", null];
  t.deepEqual(reasons.map(mapAnthropicFinishReason), ["stop", "stop", "length", "length", "tool_calls", "content_filter", "stop", "stop"]);
  t.deepEqual(convertAnthropicUsage({ input_tokens: 4, output_tokens: 2, cache_creation_input_tokens: null, cache_read_input_tokens: null }), {
    prompt_tokens: 4,
    completion_tokens: 2,
    total_tokens: 6,
    prompt_tokens_details: { cached_tokens: 0 },
  });
});

test("stream converter: the reference's text and tool-use sequences", (t) => {
  const converter = new AnthropicStreamConverter(model, 7);
  const events = [
    {
      type: "message_start",
      message: { id: "msg_01AB", model: "claude-sonnet-4-5", usage: { input_tokens: 21, output_tokens: 1, cache_read_input_tokens: 4 } },
    },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "ping" },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo" } },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_01A", name: "get_weather", input: {} } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "" } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"city": "Os' } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: 'lo"}' } },
    { type: "content_block_stop", index: 1 },
    { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 30 } },
    { type: "message_delta", delta: {}, usage: { output_tokens: 57 } },
    { type: "future_event" },
    { type: "message_stop" },
  ];
  const chunks = events.flatMap((event) => converter.push(event));
  const base = { id: "msg_01AB", object: "chat.completion.chunk", created: 7, model: "claude-sonnet-4-5" };
  const delta = (value: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta: value, logprobs: null, finish_reason: finish }],
  });
  t.deepEqual(chunks, [
    delta({ role: "assistant", content: "" }),
    delta({ content: "Hel" }),
    delta({ content: "lo" }),
    delta({ tool_calls: [{ index: 0, id: "toolu_01A", type: "function", function: { name: "get_weather", arguments: "" } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: '{"city": "Os' } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: 'lo"}' } }] }),
    delta({}, "tool_calls"),
    { ...base, choices: [], usage: { prompt_tokens: 25, completion_tokens: 57, total_tokens: 82, prompt_tokens_details: { cached_tokens: 4 } } },
  ]);
  t.true(converter.finished);
});

test("errors: the vendor body becomes an OpenAI envelope and stays as vendorBody", (t) => {
  const vendorBody = JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "Slow down" }, request_id: "req_1" });
  const converted = fromAnthropicHttpError(
    new UpstreamHttpError({ provider: "claude", status: 429, body: vendorBody, contentType: "application/json", retryAfterMs: 5000 }),
  );
  t.deepEqual([converted.status, converted.retryAfterMs, converted.vendorBody, converted.contentType], [429, 5000, vendorBody, "application/json"]);
  t.deepEqual(JSON.parse(converted.body), { error: { message: "Slow down", type: "rate_limit_error", param: null, code: "rate_limit_error" } });
  const html = fromAnthropicHttpError(new UpstreamHttpError({ provider: "claude", status: 413, body: "<html>too large</html>", contentType: "text/html" }));
  t.deepEqual(JSON.parse(html.body), {
    error: { message: "Anthropic answered HTTP 413.", type: "invalid_request_error", param: null, code: "request_too_large" },
  });
  const overloaded = fromAnthropicStreamError("claude", JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }));
  t.is(overloaded.status, 529);
  t.deepEqual(JSON.parse(overloaded.body), { error: { message: "Overloaded", type: "server_error", param: null, code: "overloaded_error" } });
});
