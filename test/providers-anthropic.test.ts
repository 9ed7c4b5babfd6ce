// The anthropic provider against its fake, for what the shared conformance suite does not cover:
// headers, per-model sampling rules, stream failures, refusals before any upstream call.

import test from "ava";
import { upstreamSchema } from "../src/config/config-schema.js";
import { UpstreamHttp } from "../src/net/upstream-http.js";
import type { ChatCapability, ChatChunk, ChatRequest } from "../src/providers/chat-types.js";
import { UnsupportedContentError, UpstreamHttpError, UpstreamNetworkError } from "../src/providers/provider-errors.js";
import { providerTypes } from "../src/providers/registry.js";
import { type FakeAnthropic, startFakeAnthropic } from "./fakes/anthropic.js";
import { providerHooks } from "./helpers/provider-hooks.js";

const http = new UpstreamHttp();
const settings = { ...upstreamSchema.parse({}), retries: 0 };
const options = () => ({ signal: new AbortController().signal });

test.after.always(() => http.close());

async function withFake(run: (chat: ChatCapability, fake: FakeAnthropic) => Promise<void>, baseSuffix = ""): Promise<void> {
  const fake = await startFakeAnthropic();
  const provider = providerTypes.get("anthropic")!.create({
    name: "claude",
    config: { type: "anthropic", baseUrl: `${fake.url}${baseSuffix}`, apiKey: "sk-ant-test", headers: { "anthropic-beta": "x" } },
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

test("sends x-api-key, anthropic-version, configured headers and max_tokens; reports request-id", async (t) => {
  await withFake(async (chat, fake) => {
    const response = await chat.complete({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] }, options());
    const sent = fake.requests[0]!;
    t.is(sent.path, "/v1/messages");
    t.is(sent.headers["x-api-key"], "sk-ant-test");
    t.is(sent.headers["anthropic-version"], "2023-06-01");
    t.is(sent.headers["anthropic-beta"], "x");
    t.is(sent.body.max_tokens, 4096);
    t.is(sent.body.stream, false);
    t.is(response.upstreamRequestId, "req_fake_1");
    t.is(response.body.choices[0]!.message && (response.body.choices[0]!.message as { content: string }).content, "echo: hi");
  });
});

test("a base URL ending in /v1 works too", async (t) => {
  await withFake(async (chat, fake) => {
    await chat.complete({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] }, options());
    t.is(fake.requests[0]!.path, "/v1/messages");
  }, "/v1");
});

test("newer models get no temperature/top_p (the fake refuses them); older ones get temperature clamped", async (t) => {
  await withFake(async (chat, fake) => {
    await chat.complete({ model: "claude-opus-4-7", messages: [{ role: "user", content: "hi" }], temperature: 0.2, top_p: 0.5 }, options());
    t.false("temperature" in fake.requests[0]!.body);
    t.false("top_p" in fake.requests[0]!.body);
    await chat.complete({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }], temperature: 1.8, top_p: 0.5 }, options());
    t.is(fake.requests[1]!.body.temperature, 1);
    t.false("top_p" in fake.requests[1]!.body);
  });
});

test("the fake does refuse temperature on a newer model (the rule above is needed)", async (t) => {
  const fake = await startFakeAnthropic();
  try {
    const response = await fetch(`${fake.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-opus-4-7", max_tokens: 10, temperature: 0.2, messages: [{ role: "user", content: "hi" }] }),
    });
    t.is(response.status, 400);
    t.is(((await response.json()) as { error: { type: string } }).error.type, "invalid_request_error");
  } finally {
    await fake.close();
  }
});

test("a conversation with merged roles, tool results and an image passes the fake's validation", async (t) => {
  await withFake(async (chat, fake) => {
    fake.enqueue({ content: "done" });
    await chat.complete(
      {
        model: "claude-sonnet-4-5",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "assistant", content: "Hello! How can I help?" },
          { role: "user", content: "Weather?" },
          { role: "user", content: [{ type: "image_url", image_url: { url: "https://example.test/sky.jpg" } }] },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_1", type: "function", function: { name: "w", arguments: "{}" } },
              { id: "call_2", type: "function", function: { name: "w", arguments: "{}" } },
            ],
          },
          { role: "tool", tool_call_id: "call_1", content: "sunny" },
          { role: "tool", tool_call_id: "call_2", content: "" },
          { role: "user", content: "thanks" },
        ],
        tools: [{ type: "function", function: { name: "w" } }],
      },
      options(),
    );
    t.deepEqual(
      fake.requests[0]!.body.messages.map((message: { role: string }) => message.role),
      ["user", "assistant", "user", "assistant", "user"],
    );
  });
});

test("thinking blocks never reach the client", async (t) => {
  await withFake(async (chat, fake) => {
    fake.enqueue({ thinking: "secret reasoning", content: "answer" }, { thinking: "secret reasoning", content: "answer" });
    const { body } = await chat.complete({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "q" }] }, options());
    t.is((body.choices[0]!.message as { content: string }).content, "answer");
    const chunks = await drain(chat, { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "q" }], stream: true });
    t.false(JSON.stringify(chunks).includes("secret"));
  });
});

test("an `error` event mid-stream is thrown from the chunks as the HTTP error it stands for", async (t) => {
  await withFake(async (chat, fake) => {
    fake.enqueue({ content: "one two three", streamError: { type: "overloaded_error", message: "Overloaded", afterChunks: 1 } });
    const error = await t.throwsAsync(drain(chat, { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "q" }], stream: true }), {
      instanceOf: UpstreamHttpError,
    });
    t.is(error!.status, 529);
    t.is(JSON.parse(error!.vendorBody!).error.type, "overloaded_error");
  });
});

test("a stream cut off before message_stop is a connection_lost network error", async (t) => {
  await withFake(async (chat, fake) => {
    fake.enqueue({ content: "one two three", dropAfterChunks: 2 });
    const error = await t.throwsAsync(drain(chat, { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "q" }], stream: true }), {
      instanceOf: UpstreamNetworkError,
    });
    t.is(error!.failure, "connection_lost");
  });
});

test("content Anthropic cannot take is refused before any upstream call", async (t) => {
  await withFake(async (chat, fake) => {
    await t.throwsAsync(chat.stream({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "x" }], n: 3, stream: true }, options()), {
      instanceOf: UnsupportedContentError,
    });
    await t.throwsAsync(
      chat.complete(
        { model: "claude-sonnet-4-5", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "ftp://x/y.png" } }] }] },
        options(),
      ),
      {
        instanceOf: UnsupportedContentError,
      },
    );
    t.is(fake.requests.length, 0);
  });
});

test("401 and 529 keep their status with the vendor body beside the envelope", async (t) => {
  await withFake(async (chat, fake) => {
    fake.enqueue({ status: 401 }, { status: 529 });
    const unauthorized = await t.throwsAsync(chat.complete({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "x" }] }, options()), {
      instanceOf: UpstreamHttpError,
    });
    t.is(unauthorized!.status, 401);
    t.is(JSON.parse(unauthorized!.body).error.type, "authentication_error");
    t.is(JSON.parse(unauthorized!.vendorBody!).type, "error");
    const overloaded = await t.throwsAsync(chat.stream({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "x" }], stream: true }, options()), {
      instanceOf: UpstreamHttpError,
    });
    t.is(overloaded!.status, 529);
    t.is(JSON.parse(overloaded!.body).error.code, "overloaded_error");
  });
});

test("the provider's configured defaultMaxTokens is sent when the request names none", async (t) => {
  const fake = await startFakeAnthropic();
  try {
    const provider = providerTypes.get("anthropic")!.create({
      name: "claude",
      config: { type: "anthropic", baseUrl: fake.url, apiKey: "k", defaultMaxTokens: 777 },
      upstream: settings,
      http,
      ...providerHooks,
    });
    await provider.chat!.complete({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] }, options());
    t.is(fake.requests[0]!.body.max_tokens, 777);
    await provider.chat!.complete({ model: "claude-sonnet-4-5", max_tokens: 12, messages: [{ role: "user", content: "hi" }] }, options());
    t.is(fake.requests[1]!.body.max_tokens, 12);
  } finally {
    await fake.close();
  }
});
