// Pure converters between OpenAI chat completions and Gemini generateContent
// (reference/gemini.md §6), asserted by plain equality.
import test from "ava";
import type { ChatRequest } from "../src/providers/chat-types.js";
import { convertFromGeminiChat, convertGeminiUsage, GeminiStreamConverter } from "../src/providers/gemini/convert-from-gemini-chat.js";
import { convertToGeminiChat } from "../src/providers/gemini/convert-to-gemini-chat.js";
import { fromGeminiHttpError, fromGeminiStreamError } from "../src/providers/gemini/gemini-error.js";
import { mapGeminiFinishReason } from "../src/providers/gemini/map-gemini-finish-reason.js";
import { UnsupportedContentError, UpstreamHttpError } from "../src/providers/provider-errors.js";

const model = "gemini-2.5-flash";
const chat = (messages: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): ChatRequest => ({ model, messages, ...extra });
const ids = () => {
  let next = 0;
  return () => `call_${next++}`;
};

test("system -> systemInstruction, assistant -> model, consecutive roles merge, empty text dropped", (t) => {
  const body = convertToGeminiChat(
    chat([
      { role: "system", content: "Be brief." },
      { role: "developer", content: "Metric units." },
      { role: "user", content: "one" },
      {
        role: "user",
        content: [
          { type: "text", text: "" },
          { type: "text", text: "two" },
        ],
      },
      { role: "assistant", content: "ok" },
      { role: "assistant", content: "" },
      { role: "user", content: "three" },
    ]),
  );
  t.deepEqual(body, {
    systemInstruction: { parts: [{ text: "Be brief." }, { text: "Metric units." }] },
    contents: [
      { role: "user", parts: [{ text: "one" }, { text: "two" }] },
      { role: "model", parts: [{ text: "ok" }] },
      { role: "user", parts: [{ text: "three" }] },
    ],
  });
});

test("generation config: max tokens, sampling, stop, n, seed, JSON output; penalties left out", (t) => {
  const body = convertToGeminiChat(
    chat([{ role: "user", content: "x" }], {
      max_tokens: 50,
      max_completion_tokens: 100,
      temperature: 1.5,
      top_p: 0.9,
      stop: "END",
      n: 2,
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: 0.5,
      logprobs: true,
      user: "u",
      response_format: { type: "json_schema", json_schema: { name: "r", schema: { type: "object", additionalProperties: false } } },
    }),
  );
  t.deepEqual(body.generationConfig, {
    maxOutputTokens: 100,
    temperature: 1.5,
    topP: 0.9,
    stopSequences: ["END"],
    candidateCount: 2,
    seed: 7,
    responseMimeType: "application/json",
    responseJsonSchema: { type: "object", additionalProperties: false },
  });
  t.false("generationConfig" in convertToGeminiChat(chat([{ role: "user", content: "x" }], { temperature: null, stop: null })));
  t.deepEqual(convertToGeminiChat(chat([{ role: "user", content: "x" }], { response_format: { type: "json_object" } })).generationConfig, {
    responseMimeType: "application/json",
  });
});

test("tool calls -> functionCall parts, tool messages -> functionResponse parts named by call id", (t) => {
  const body = convertToGeminiChat(
    chat([
      { role: "user", content: "Weather in Oslo and Bergen?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_a",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
            extra_content: { google: { thought_signature: "sig1" } },
          },
          { id: "call_b", type: "function", function: { name: "get_time", arguments: '{"city":"Bergen"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: '{"temp_c":4}' },
      { role: "tool", tool_call_id: "call_b", content: "12:00" },
      { role: "user", content: "Thanks" },
    ]),
  );
  t.deepEqual(body.contents.slice(1), [
    {
      role: "model",
      parts: [
        { functionCall: { name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: "sig1" },
        { functionCall: { name: "get_time", args: { city: "Bergen" } } },
      ],
    },
    {
      role: "user",
      parts: [
        { functionResponse: { name: "get_weather", response: { temp_c: 4 } } },
        { functionResponse: { name: "get_time", response: { result: "12:00" } } },
        { text: "Thanks" },
      ],
    },
  ]);
});

test("a tool message without a matching earlier call is refused", (t) => {
  const error = t.throws(
    () =>
      convertToGeminiChat(
        chat([
          { role: "user", content: "x" },
          { role: "tool", tool_call_id: "nope", content: "1" },
        ]),
      ),
    {
      instanceOf: UnsupportedContentError,
    },
  );
  t.is(error!.param, "messages[1].tool_call_id");
});

test("tools and tool_choice", (t) => {
  const tools = [
    { type: "function", function: { name: "f", description: "d", parameters: { type: "object", properties: {}, additionalProperties: false } } },
    { type: "function", function: { name: "g" } },
  ];
  const body = convertToGeminiChat(
    chat([{ role: "user", content: "x" }], { tools, tool_choice: { type: "function", function: { name: "g" } }, parallel_tool_calls: false }),
  );
  t.deepEqual(body.tools, [
    {
      functionDeclarations: [
        { name: "f", description: "d", parametersJsonSchema: { type: "object", properties: {}, additionalProperties: false } },
        { name: "g" },
      ],
    },
  ]);
  t.deepEqual(body.toolConfig, { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["g"] } });
  const mode = (choice: unknown) =>
    convertToGeminiChat(chat([{ role: "user", content: "x" }], { tools, tool_choice: choice })).toolConfig?.functionCallingConfig.mode;
  t.deepEqual([mode("auto"), mode("none"), mode("required"), mode(undefined)], ["AUTO", "NONE", "ANY", undefined]);
});

test("images: data: URLs -> inlineData; by URL refused; audio and PDF files inline", (t) => {
  const body = convertToGeminiChat(
    chat([
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "data:image/webp;base64,UklGRg==" } },
          { type: "input_audio", input_audio: { data: "UklGRgAA", format: "wav" } },
          { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } },
        ],
      },
    ]),
  );
  t.deepEqual(body.contents[0]!.parts, [
    { inlineData: { mimeType: "image/webp", data: "UklGRg==" } },
    { inlineData: { mimeType: "audio/wav", data: "UklGRgAA" } },
    { inlineData: { mimeType: "application/pdf", data: "JVBERi0=" } },
  ]);
  const error = t.throws(
    () => convertToGeminiChat(chat([{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.test/cat.png" } }] }])),
    {
      instanceOf: UnsupportedContentError,
    },
  );
  t.is(error!.param, "messages[0].content[0]");
  t.regex(error!.message, /data: URLs/);
});

test("response: text, function calls with synthesized ids and signatures, thoughts dropped", (t) => {
  const completion = convertFromGeminiChat(
    {
      candidates: [
        {
          content: {
            role: "model",
            parts: [
              { text: "thinking...", thought: true },
              { text: "Checking." },
              { functionCall: { name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: "sig" },
            ],
          },
          finishReason: "STOP",
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 3, cachedContentTokenCount: 4, totalTokenCount: 18 },
      modelVersion: "gemini-2.5-flash-001",
      responseId: "resp_1",
    },
    { model, created: 9, newToolCallId: ids() },
  );
  t.deepEqual(completion, {
    id: "resp_1",
    object: "chat.completion",
    created: 9,
    model: "gemini-2.5-flash-001",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: "Checking.",
          refusal: null,
          tool_calls: [
            {
              id: "call_0",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
              extra_content: { google: { thought_signature: "sig" } },
            },
          ],
        },
        logprobs: null,
        finish_reason: "tool_calls",
      },
    ],
    usage: {
      prompt_tokens: 10,
      completion_tokens: 8,
      total_tokens: 18,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 3 },
    },
  });
});

test("a blocked prompt is a content_filter choice; several candidates are several choices", (t) => {
  const blocked = convertFromGeminiChat({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3 } }, { model, created: 1 });
  t.deepEqual(blocked.choices, [{ index: 0, message: { role: "assistant", content: null, refusal: null }, logprobs: null, finish_reason: "content_filter" }]);
  const two = convertFromGeminiChat(
    {
      candidates: [
        { content: { parts: [{ text: "a" }] }, finishReason: "STOP", index: 0 },
        { content: { parts: [{ text: "b" }] }, finishReason: "MAX_TOKENS", index: 1 },
      ],
    },
    { model, created: 1 },
  );
  t.deepEqual(
    two.choices.map((choice) => [choice.index, (choice.message as { content: string }).content, choice.finish_reason]),
    [
      [0, "a", "stop"],
      [1, "b", "length"],
    ],
  );
});

test("finish reasons and usage", (t) => {
  t.deepEqual(
    ["STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "OTHER", "MALFORMED_FUNCTION_CALL", undefined].map((reason) =>
      mapGeminiFinishReason(reason, false),
    ),
    ["stop", "length", "content_filter", "content_filter", "content_filter", "stop", "stop", "stop"],
  );
  t.is(mapGeminiFinishReason("STOP", true), "tool_calls");
  t.is(mapGeminiFinishReason("MAX_TOKENS", true), "length");
  t.deepEqual(convertGeminiUsage(undefined), { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, prompt_tokens_details: { cached_tokens: 0 } });
});

test("stream converter: role first, text pieces, whole function calls as fragments, finish, usage at the end", (t) => {
  const converter = new GeminiStreamConverter({ model, created: 5, newToolCallId: ids() });
  const chunks = [
    { candidates: [{ content: { role: "model", parts: [{ text: "Hello" }] } }], modelVersion: "gemini-2.5-flash", responseId: "r1" },
    {
      candidates: [{ content: { role: "model", parts: [{ text: "thought", thought: true }, { text: " there" }] } }],
      usageMetadata: { promptTokenCount: 3 },
      responseId: "r1",
    },
    { candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "f", args: { a: 1 } } }] } }], responseId: "r1" },
    {
      candidates: [{ content: { role: "model", parts: [{ text: "", thoughtSignature: "x" }] }, finishReason: "STOP" }],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 },
      responseId: "r1",
    },
  ].flatMap((chunk) => converter.push(chunk));
  t.true(converter.finished);
  const base = { id: "r1", object: "chat.completion.chunk", created: 5, model: "gemini-2.5-flash" };
  const delta = (value: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta: value, logprobs: null, finish_reason: finish }],
  });
  t.deepEqual(
    [...chunks, ...converter.end()],
    [
      delta({ role: "assistant", content: "" }),
      delta({ content: "Hello" }),
      delta({ content: " there" }),
      delta({ tool_calls: [{ index: 0, id: "call_0", type: "function", function: { name: "f", arguments: "" } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }),
      delta({}, "tool_calls"),
      { ...base, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } } },
    ],
  );
});

test("stream converter: a blocked prompt still opens with the role and finishes content_filter", (t) => {
  const converter = new GeminiStreamConverter({ model, created: 5 });
  const chunks = converter.push({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 2 }, responseId: "r" });
  t.deepEqual(
    chunks.map((chunk) => [chunk.choices![0]!.delta, chunk.choices![0]!.finish_reason]),
    [
      [{ role: "assistant", content: "" }, null],
      [{}, "content_filter"],
    ],
  );
  t.true(converter.finished);
});

test("errors: Google bodies become OpenAI envelopes; a bad key is 401; RetryInfo gives the retry delay", (t) => {
  const badKey = JSON.stringify({
    error: {
      code: 400,
      message: "API key not valid. Please pass a valid API key.",
      status: "INVALID_ARGUMENT",
      details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID" }],
    },
  });
  const converted = fromGeminiHttpError(new UpstreamHttpError({ provider: "gemini", status: 400, body: badKey, contentType: "application/json" }));
  t.is(converted.status, 401);
  t.is(converted.vendorBody, badKey);
  t.deepEqual(JSON.parse(converted.body), {
    error: { message: "API key not valid. Please pass a valid API key.", type: "authentication_error", param: null, code: "invalid_api_key" },
  });
  const quota = JSON.stringify({
    error: {
      code: 429,
      message: "Quota",
      status: "RESOURCE_EXHAUSTED",
      details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "1.5s" }],
    },
  });
  const limited = fromGeminiHttpError(new UpstreamHttpError({ provider: "gemini", status: 429, body: quota, contentType: "application/json" }));
  t.is(limited.retryAfterMs, 1500);
  t.deepEqual(JSON.parse(limited.body).error, { message: "Quota", type: "rate_limit_error", param: null, code: "resource_exhausted" });
  const midStream = fromGeminiStreamError("gemini", JSON.stringify({ error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } }));
  t.is(midStream.status, 503);
  t.is(JSON.parse(midStream.body).error.type, "server_error");
});
