// The gemini provider against its fake, for what the shared conformance suite does not cover:
// key header and paths, refusals, stream failures, thought signatures, several candidates.

import test from "ava";
import { upstreamSchema } from "../src/config/config-schema.js";
import { UpstreamHttp } from "../src/net/upstream-http.js";
import type { ChatCapability, ChatChunk, ChatRequest } from "../src/providers/chat-types.js";
import { UnsupportedContentError, UpstreamHttpError, UpstreamNetworkError } from "../src/providers/provider-errors.js";
import { providerTypes } from "../src/providers/registry.js";
import { type FakeGemini, startFakeGemini } from "./fakes/gemini.js";
import { providerHooks } from "./helpers/provider-hooks.js";

const http = new UpstreamHttp();
const settings = { ...upstreamSchema.parse({}), retries: 0 };
const options = () => ({ signal: new AbortController().signal });
const model = "gemini-2.5-flash";

test.after.always(() => http.close());

async function withFake(run: (chat: ChatCapability, fake: FakeGemini) => Promise<void>, baseUrl?: (fake: FakeGemini) => string): Promise<void> {
  const fake = await startFakeGemini({}, { validKey: "AIza-test" });
  const provider = providerTypes.get("gemini")!.create({
    name: "gemini",
    config: { type: "gemini", baseUrl: baseUrl ? baseUrl(fake) : fake.url, apiKey: "AIza-test" },
    upstream: settings,
    http,
    ...providerHooks,
  });
  try {
    await run(provider.chat!, fake);
  } finally {
    await fake.close();
  }
}

async function drain(chat: ChatCapability, request: ChatRequest): Promise<ChatChunk[]> {
  const response = await chat.stream(request, options());
  const chunks: ChatChunk[] = [];
  for await (const batch of response.chunks) for (const event of batch) chunks.push(event as ChatChunk);
  return chunks;
}

test("sends the key in x-goog-api-key to :generateContent and :streamGenerateContent?alt=sse", async (t) => {
  await withFake(async (chat, fake) => {
    await chat.complete({ model, messages: [{ role: "user", content: "hi" }] }, options());
    await drain(chat, { model, messages: [{ role: "user", content: "hi" }], stream: true });
    t.deepEqual(
      fake.requests.map((request) => [request.path, request.query, request.headers["x-goog-api-key"]]),
      [
        ["/v1beta/models/gemini-2.5-flash:generateContent", {}, "AIza-test"],
        ["/v1beta/models/gemini-2.5-flash:streamGenerateContent", { alt: "sse" }, "AIza-test"],
      ],
    );
    t.false("stream" in fake.requests[1]!.body);
  });
});

test("a base URL without the API version gets /v1beta", async (t) => {
  await withFake(
    async (chat, fake) => {
      await chat.complete({ model: `models/${model}`, messages: [{ role: "user", content: "hi" }] }, options());
      t.is(fake.requests[0]!.path, "/v1beta/models/gemini-2.5-flash:generateContent");
    },
    (fake) => `http://127.0.0.1:${fake.port}/`,
  );
});

test("OpenAI-only parameters never reach Gemini (it refuses unknown fields)", async (t) => {
  await withFake(async (chat, fake) => {
    const { body } = await chat.complete(
      {
        model,
        messages: [{ role: "user", content: "hi" }],
        temperature: 0.4,
        presence_penalty: 1,
        logit_bias: { "1": 2 },
        stream_options: { include_usage: true },
        user: "u",
        parallel_tool_calls: true,
      },
      options(),
    );
    t.is((body.choices[0]!.message as { content: string }).content, "echo: hi");
    t.deepEqual(fake.requests[0]!.body.generationConfig, { temperature: 0.4 });
  });
});

test("an image by URL is refused before any upstream call", async (t) => {
  await withFake(async (chat, fake) => {
    const error = await t.throwsAsync(
      chat.complete({ model, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.test/a.png" } }] }] }, options()),
      {
        instanceOf: UnsupportedContentError,
      },
    );
    t.is(error!.param, "messages[0].content[0]");
    t.is(fake.requests.length, 0);
  });
});

test("a wrong key (Gemini's 400 API_KEY_INVALID) is reported as 401", async (t) => {
  const fake = await startFakeGemini({}, { validKey: "right" });
  try {
    const chat = providerTypes
      .get("gemini")!
      .create({ name: "gemini", config: { type: "gemini", baseUrl: fake.url, apiKey: "wrong" }, upstream: settings, http, ...providerHooks }).chat!;
    const error = await t.throwsAsync(chat.complete({ model, messages: [{ role: "user", content: "x" }] }, options()), { instanceOf: UpstreamHttpError });
    t.is(error!.status, 401);
    t.is(JSON.parse(error!.body).error.code, "invalid_api_key");
    t.is(JSON.parse(error!.vendorBody!).error.status, "INVALID_ARGUMENT");
  } finally {
    await fake.close();
  }
});

test("a 429 without Retry-After takes the delay from RetryInfo", async (t) => {
  await withFake(async (chat, fake) => {
    fake.enqueue({ status: 429, retryDelay: "4s" });
    const error = await t.throwsAsync(chat.complete({ model, messages: [{ role: "user", content: "x" }] }, options()), { instanceOf: UpstreamHttpError });
    t.is(error!.retryAfterMs, 4000);
  });
});

test("an error chunk mid-stream is thrown as the HTTP error it stands for", async (t) => {
  await withFake(async (chat, fake) => {
    fake.enqueue({ content: "a b c", streamError: { code: 503, status: "UNAVAILABLE", message: "The model is overloaded.", afterChunks: 1 } });
    const error = await t.throwsAsync(drain(chat, { model, messages: [{ role: "user", content: "x" }], stream: true }), { instanceOf: UpstreamHttpError });
    t.is(error!.status, 503);
    t.is(JSON.parse(error!.body).error.message, "The model is overloaded.");
  });
});

test("a stream cut off before its finishReason is a connection_lost network error", async (t) => {
  await withFake(async (chat, fake) => {
    fake.enqueue({ content: "a b c", dropAfterChunks: 1 });
    const error = await t.throwsAsync(drain(chat, { model, messages: [{ role: "user", content: "x" }], stream: true }), { instanceOf: UpstreamNetworkError });
    t.is(error!.failure, "connection_lost");
  });
});

test("thought signatures ride out in extra_content and come back on the function call", async (t) => {
  await withFake(async (chat, fake) => {
    fake.enqueue({ functionCalls: [{ name: "lookup", args: { q: "x" } }], thoughtSignature: "c2lnbmF0dXJl", thought: "private thoughts" }, { content: "ok" });
    const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } } }];
    const chunks = await drain(chat, { model, messages: [{ role: "user", content: "find x" }], tools, stream: true });
    t.false(JSON.stringify(chunks).includes("private thoughts"));
    const header = chunks.flatMap((chunk) => (chunk.choices?.[0]?.delta?.tool_calls as Array<Record<string, any>> | undefined) ?? []).find((call) => call.id)!;
    t.deepEqual(header.extra_content, { google: { thought_signature: "c2lnbmF0dXJl" } });
    const call = { id: header.id, type: "function", function: { name: "lookup", arguments: '{"q":"x"}' }, extra_content: header.extra_content };
    await chat.complete(
      {
        model,
        messages: [
          { role: "user", content: "find x" },
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: header.id, content: "found" },
        ],
        tools,
      },
      options(),
    );
    t.deepEqual(fake.requests[1]!.body.contents[1].parts[0], { functionCall: { name: "lookup", args: { q: "x" } }, thoughtSignature: "c2lnbmF0dXJl" });
  });
});

test("n > 1 asks for candidates and returns one choice each", async (t) => {
  await withFake(async (chat, fake) => {
    fake.enqueue({ content: "same" }, { content: "same" });
    const { body } = await chat.complete({ model, messages: [{ role: "user", content: "x" }], n: 2 }, options());
    t.is(fake.requests[0]!.body.generationConfig.candidateCount, 2);
    t.deepEqual(
      body.choices.map((choice) => choice.index),
      [0, 1],
    );
  });
});

test("a blocked prompt streams the role and a content_filter finish, then usage", async (t) => {
  await withFake(async (chat, fake) => {
    fake.enqueue({ blockReason: "SAFETY" });
    const chunks = await drain(chat, { model, messages: [{ role: "user", content: "x" }], stream: true });
    t.is(chunks[0]!.choices![0]!.delta!.role, "assistant");
    t.is(chunks[1]!.choices![0]!.finish_reason, "content_filter");
    t.deepEqual(chunks.at(-1)!.choices, []);
  });
});
