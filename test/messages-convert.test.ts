// Pure converters for the Anthropic-format messages endpoint in front of chat upstreams:
// Messages request -> chat request, chat completion -> Messages response, chat chunks -> the
// native event sequence. Plain equality.
import test from "ava";
import { ChatStreamToMessagesEvents, messagesErrorEvent, messagesErrorType } from "../src/gateway/messages/chat-stream-to-messages-events.js";
import { convertChatToMessages, mapFinishReasonToStopReason } from "../src/gateway/messages/convert-chat-to-messages.js";
import { convertMessagesToChat } from "../src/gateway/messages/convert-messages-to-chat.js";
import type { MessagesRequest } from "../src/gateway/messages/messages-types.js";
import type { ChatChunk } from "../src/providers/chat-types.js";
import { UnsupportedContentError } from "../src/providers/provider-errors.js";

const base = { model: "anthropic/claude", max_tokens: 256 };

test("request: system blocks, text, images, stop sequences, sampling; metadata, top_k and max_tokens (the provider writes the cap reserved for) left out", (t) => {
  const request: MessagesRequest = {
    ...base,
    system: [
      { type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } },
      { type: "text", text: "Use metric units." },
    ],
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } },
          { type: "image", source: { type: "url", url: "https://example.test/cat.jpg" } },
        ],
      },
      { role: "assistant", content: "A cat." },
      { role: "user", content: "Sure?" },
    ],
    stop_sequences: ["END"],
    temperature: 0.3,
    top_p: 0.9,
    top_k: 40,
    stream: true,
    metadata: { user_id: "u-1" },
    thinking: { type: "enabled", budget_tokens: 2048 },
  };
  t.deepEqual(convertMessagesToChat(request), {
    model: "anthropic/claude",
    stream: true,
    stop: ["END"],
    temperature: 0.3,
    top_p: 0.9,
    messages: [
      { role: "system", content: "You are terse.\n\nUse metric units." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } },
          { type: "image_url", image_url: { url: "https://example.test/cat.jpg" } },
        ],
      },
      { role: "assistant", content: "A cat." },
      { role: "user", content: "Sure?" },
    ],
  });
});

test("request: tool_use -> tool_calls, tool_result -> tool messages before the rest of the turn", (t) => {
  const chat = convertMessagesToChat({
    ...base,
    messages: [
      { role: "user", content: "Weather?" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "hmm", signature: "s" },
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } },
          { type: "tool_use", id: "toolu_2", name: "get_weather", input: { city: "Bergen" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "4°C" },
          { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "no data" }], is_error: true },
          { type: "text", text: "Thanks" },
        ],
      },
    ],
  });
  t.deepEqual(chat.messages.slice(1), [
    {
      role: "assistant",
      content: "Checking.",
      tool_calls: [
        { id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
        { id: "toolu_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Bergen"}' } },
      ],
    },
    { role: "tool", tool_call_id: "toolu_1", content: "4°C" },
    { role: "tool", tool_call_id: "toolu_2", content: "Error: no data" },
    { role: "user", content: "Thanks" },
  ]);
});

test("request: an image returned by a tool follows the tool messages as a user image", (t) => {
  const chat = convertMessagesToChat({
    ...base,
    messages: [
      { role: "user", content: "Screenshot?" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "screenshot", input: {} }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "t1",
            content: [
              { type: "text", text: "done" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
            ],
          },
        ],
      },
    ],
  });
  t.deepEqual(chat.messages.slice(1), [
    { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "screenshot", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "t1", content: "done" },
    { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
  ]);
});

test("request: tools and tool_choice; server tools refused", (t) => {
  const chat = convertMessagesToChat({
    ...base,
    messages: [{ role: "user", content: "x" }],
    tools: [{ name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }, { name: "noop" }],
    tool_choice: { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
  });
  t.deepEqual(chat.tools, [
    { type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
    { type: "function", function: { name: "noop", parameters: { type: "object", properties: {} } } },
  ]);
  t.deepEqual(chat.tool_choice, { type: "function", function: { name: "get_weather" } });
  t.is(chat.parallel_tool_calls, false);
  const choice = (type: string) =>
    convertMessagesToChat({ ...base, messages: [{ role: "user", content: "x" }], tools: [{ name: "a" }], tool_choice: { type } }).tool_choice;
  t.deepEqual([choice("auto"), choice("any"), choice("none")], ["auto", "required", "none"]);
  t.throws(() => convertMessagesToChat({ ...base, messages: [{ role: "user", content: "x" }], tools: [{ type: "web_search_20250305", name: "web_search" }] }), {
    instanceOf: UnsupportedContentError,
  });
});

test("request: documents become file parts; unknown blocks are refused with their path", (t) => {
  const chat = convertMessagesToChat({
    ...base,
    messages: [{ role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } }] }],
  });
  t.deepEqual(chat.messages, [
    { role: "user", content: [{ type: "file", file: { filename: "document.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } }] },
  ]);
  const error = t.throws(
    () => convertMessagesToChat({ ...base, messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type: "search_result" }] }] }),
    {
      instanceOf: UnsupportedContentError,
    },
  );
  t.is(error!.param, "messages[0].content[1]");
});

test("response: text and tool_use blocks, stop_reason, usage split into input and cache reads, msg_ id", (t) => {
  const message = convertChatToMessages(
    {
      id: "chatcmpl-abc",
      model: "gpt-4o",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "Let me check.",
            tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
          },
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129, prompt_tokens_details: { cached_tokens: 100 } },
    },
    { model: "anthropic/claude" },
  );
  t.deepEqual(message, {
    id: "msg_abc",
    type: "message",
    role: "assistant",
    model: "anthropic/claude",
    content: [
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Oslo" } },
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 100 },
  });
  t.deepEqual(["stop", "length", "tool_calls", "function_call", "content_filter", null].map(mapFinishReasonToStopReason), [
    "end_turn",
    "max_tokens",
    "tool_use",
    "tool_use",
    "refusal",
    "end_turn",
  ]);
  t.is(convertChatToMessages({ id: "msg_keep", model: "m", choices: [{ message: { content: "" }, finish_reason: "stop" }] }, { model: "m" }).id, "msg_keep");
});

test("stream: text then a tool call, as the native event sequence", (t) => {
  const converter = new ChatStreamToMessagesEvents({ model: "anthropic/claude", inputTokens: 12 });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): ChatChunk => ({
    id: "chatcmpl-1",
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const events = [
    chunk({ role: "assistant", content: "" }),
    chunk({ content: "Let me " }),
    chunk({ content: "check." }),
    chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
    chunk({}, "tool_calls"),
    {
      id: "chatcmpl-1",
      model: "m",
      choices: [],
      usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38, prompt_tokens_details: { cached_tokens: 10 } },
    },
  ].flatMap((value) => converter.push(value));
  events.push(...converter.finish());
  t.deepEqual(events, [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "anthropic/claude",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 12, output_tokens: 0 },
        },
      },
    },
    { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
    { event: "ping", data: { type: "ping" } },
    { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Let me " } } },
    { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "check." } } },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    {
      event: "content_block_start",
      data: { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "call_1", name: "get_weather", input: {} } },
    },
    { event: "content_block_delta", data: { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"city":' } } },
    { event: "content_block_delta", data: { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '"Oslo"}' } } },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 1 } },
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: "tool_use", stop_sequence: null },
        usage: { input_tokens: 20, output_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 10 },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  ]);
});

test("stream: two parallel tool calls are two blocks; an empty stream still starts and stops", (t) => {
  const converter = new ChatStreamToMessagesEvents({ model: "m" });
  const names = [
    { id: "x", choices: [{ index: 0, delta: { role: "assistant", tool_calls: [{ index: 0, id: "a", function: { name: "f", arguments: "{}" } }] } }] },
    { id: "x", choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: "b", function: { name: "g", arguments: "{}" } }] }, finish_reason: "tool_calls" }] },
  ]
    .flatMap((value) => converter.push(value))
    .concat(converter.finish())
    .map((event) => event.event);
  t.deepEqual(names, [
    "message_start",
    "content_block_start",
    "ping",
    "content_block_delta",
    "content_block_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
  const empty = new ChatStreamToMessagesEvents({ model: "m" }).finish();
  t.deepEqual(
    empty.map((event) => event.event),
    ["message_start", "message_delta", "message_stop"],
  );
  t.is((empty[1]!.data.delta as { stop_reason: string }).stop_reason, "end_turn");
});

test("error event and error types by status", (t) => {
  t.deepEqual(messagesErrorEvent("overloaded_error", "Overloaded"), {
    event: "error",
    data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
  });
  t.deepEqual([400, 401, 403, 404, 413, 429, 500, 502, 529, 422].map(messagesErrorType), [
    "invalid_request_error",
    "authentication_error",
    "permission_error",
    "not_found_error",
    "request_too_large",
    "rate_limit_error",
    "api_error",
    "api_error",
    "overloaded_error",
    "invalid_request_error",
  ]);
});
