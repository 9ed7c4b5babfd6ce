// One conformance suite every chat provider passes: each type from the registry, with the real
// UpstreamHttp, against its fake vendor. What differs per vendor (how to make the fake answer,
// where the image and the tool result land in the vendor's request) is in the `vendors` table.

import test from "ava";
import { upstreamSchema } from "../src/config/config-schema.js";
import { UpstreamHttp } from "../src/net/upstream-http.js";
import type { ChatCapability, ChatChunk, ChatRequest, ChatUsage } from "../src/providers/chat-types.js";
import { UpstreamHttpError } from "../src/providers/provider-errors.js";
import { providerTypes } from "../src/providers/registry.js";
import { startFakeAnthropic } from "./fakes/anthropic.js";
import { startFakeGemini } from "./fakes/gemini.js";
import { startFakeOpenAI } from "./fakes/openai.js";
import { providerHooks } from "./helpers/provider-hooks.js";

interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** A running fake, driven in vendor-neutral terms. */
interface VendorFake {
  baseUrl: string;
  lastBody(): any;
  requestCount(): number;
  replyText(text: string): void;
  replyToolCall(call: ToolCall): void;
  replyError(status: number, retryAfterSeconds?: string): void;
  /** Enqueue a reply with fixed usage; returns the OpenAI usage expected from it. */
  replyUsage(): ChatUsage;
  close(): Promise<void>;
}

interface Vendor {
  type: string;
  model: string;
  start(): Promise<VendorFake>;
  /** The image as the vendor received it, from the request body. */
  sentImage(body: any): unknown;
  expectedImage(mediaType: string, data: string): unknown;
  /** The tool result as the vendor received it. */
  sentToolResult(body: any): unknown;
  expectedToolResult(call: ToolCall, content: string): unknown;
}

const vendors: Vendor[] = [
  {
    type: "openai",
    model: "gpt-4o-mini",
    async start() {
      const fake = await startFakeOpenAI();
      return {
        baseUrl: fake.url,
        lastBody: () => fake.requests.at(-1)!.body,
        requestCount: () => fake.requests.length,
        replyText: (content) => fake.enqueue({ content }),
        replyToolCall: (call) => fake.enqueue({ toolCalls: [{ id: call.id, name: call.name, arguments: JSON.stringify(call.args) }] }),
        replyError: (status, retryAfter) => fake.enqueue({ status, retryAfter }),
        replyUsage() {
          fake.enqueue({ usage: { prompt_tokens: 11, completion_tokens: 7 } });
          return { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
        },
        close: () => fake.close(),
      };
    },
    sentImage: (body) => body.messages[0].content[1],
    expectedImage: (mediaType, data) => ({ type: "image_url", image_url: { url: `data:${mediaType};base64,${data}`, detail: "low" } }),
    sentToolResult: (body) => body.messages[2],
    expectedToolResult: (call, content) => ({ role: "tool", tool_call_id: call.id, content }),
  },
  {
    type: "anthropic",
    model: "claude-sonnet-4-5",
    async start() {
      const fake = await startFakeAnthropic();
      return {
        baseUrl: fake.url,
        lastBody: () => fake.requests.at(-1)!.body,
        requestCount: () => fake.requests.length,
        replyText: (content) => fake.enqueue({ content }),
        replyToolCall: (call) => fake.enqueue({ toolUses: [{ id: call.id, name: call.name, input: call.args }] }),
        replyError: (status, retryAfter) => fake.enqueue({ status, retryAfter }),
        replyUsage() {
          fake.enqueue({ usage: { input_tokens: 5, cache_creation_input_tokens: 20, cache_read_input_tokens: 100, output_tokens: 7 } });
          return { prompt_tokens: 125, completion_tokens: 7, total_tokens: 132, prompt_tokens_details: { cached_tokens: 100 } };
        },
        close: () => fake.close(),
      };
    },
    sentImage: (body) => body.messages[0].content[1],
    expectedImage: (mediaType, data) => ({ type: "image", source: { type: "base64", media_type: mediaType, data } }),
    sentToolResult: (body) => body.messages[2].content[0],
    expectedToolResult: (call, content) => ({ type: "tool_result", tool_use_id: call.id, content }),
  },
  {
    type: "gemini",
    model: "gemini-2.5-flash",
    async start() {
      const fake = await startFakeGemini();
      return {
        baseUrl: fake.url,
        lastBody: () => fake.requests.at(-1)!.body,
        requestCount: () => fake.requests.length,
        replyText: (content) => fake.enqueue({ content }),
        replyToolCall: (call) => fake.enqueue({ functionCalls: [{ name: call.name, args: call.args }] }),
        replyError: (status, retryAfter) => fake.enqueue({ status, retryAfter }),
        replyUsage() {
          fake.enqueue({ usage: { promptTokenCount: 125, candidatesTokenCount: 7, cachedContentTokenCount: 100 } });
          return { prompt_tokens: 125, completion_tokens: 7, total_tokens: 132, prompt_tokens_details: { cached_tokens: 100 } };
        },
        close: () => fake.close(),
      };
    },
    sentImage: (body) => body.contents[0].parts[1],
    expectedImage: (mediaType, data) => ({ inlineData: { mimeType: mediaType, data } }),
    sentToolResult: (body) => body.contents[2].parts[0],
    expectedToolResult: (call, content) => ({ functionResponse: { name: call.name, response: { result: content } } }),
  },
];

const http = new UpstreamHttp();
const settings = { ...upstreamSchema.parse({}), retries: 0 };
/** Fresh options per call: one shared signal would collect an abort listener per request. */
const callOptions = () => ({ signal: new AbortController().signal });
const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather by city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

test.after.always(() => http.close());

function chatFor(vendor: Vendor, fake: VendorFake): ChatCapability {
  const definition = providerTypes.get(vendor.type)!;
  return definition.create({
    name: vendor.type,
    config: { type: vendor.type, baseUrl: fake.baseUrl, apiKey: "test-key" },
    upstream: settings,
    http,
    ...providerHooks,
  }).chat!;
}

async function withVendor(vendor: Vendor, run: (chat: ChatCapability, fake: VendorFake) => Promise<void>): Promise<void> {
  const fake = await vendor.start();
  try {
    await run(chatFor(vendor, fake), fake);
  } finally {
    await fake.close();
  }
}

async function collect(chat: ChatCapability, request: ChatRequest): Promise<ChatChunk[]> {
  const response = await chat.stream(request, callOptions());
  const chunks: ChatChunk[] = [];
  for await (const batch of response.chunks) for (const event of batch) chunks.push(typeof event === "string" ? (JSON.parse(event) as ChatChunk) : event);
  return chunks;
}

function textOf(chunks: ChatChunk[]): string {
  return chunks.map((chunk) => (chunk.choices?.[0]?.delta?.content as string | undefined) ?? "").join("");
}

/** Tool calls put back together from their fragments, as an SDK does. */
function assembleToolCalls(chunks: ChatChunk[]): Array<{ id: string; name: string; arguments: string; firstFragment: any }> {
  const calls: Array<{ id: string; name: string; arguments: string; firstFragment: any }> = [];
  for (const chunk of chunks) {
    for (const fragment of (chunk.choices?.[0]?.delta?.tool_calls as any[] | undefined) ?? []) {
      calls[fragment.index] ??= { id: "", name: "", arguments: "", firstFragment: fragment };
      const call = calls[fragment.index]!;
      if (fragment.id) call.id = fragment.id;
      if (fragment.function?.name) call.name = fragment.function.name;
      call.arguments += fragment.function?.arguments ?? "";
    }
  }
  return calls;
}

function message(completion: { choices: Array<Record<string, unknown>> }): any {
  return completion.choices[0]!.message;
}

for (const vendor of vendors) {
  const request = (messages: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): ChatRequest => ({ model: vendor.model, messages, ...extra });

  test(`${vendor.type}: non-stream text completion`, async (t) => {
    await withVendor(vendor, async (chat, fake) => {
      fake.replyText("Hello from the fake.");
      const { body } = await chat.complete(
        request([
          { role: "system", content: "Be brief." },
          { role: "user", content: "hi" },
        ]),
        callOptions(),
      );
      t.is(body.object, "chat.completion");
      t.truthy(body.id);
      t.is(typeof body.created, "number");
      t.is(message(body).role, "assistant");
      t.is(message(body).content, "Hello from the fake.");
      t.is(body.choices[0]!.finish_reason, "stop");
      t.true(body.usage!.prompt_tokens > 0 && body.usage!.completion_tokens > 0);
      t.is(body.usage!.total_tokens, body.usage!.prompt_tokens + body.usage!.completion_tokens);
    });
  });

  test(`${vendor.type}: stream starts with the role, reassembles, finishes, ends with usage`, async (t) => {
    await withVendor(vendor, async (chat, fake) => {
      fake.replyText("one two three four");
      const chunks = await collect(chat, request([{ role: "user", content: "count" }], { stream: true }));
      t.is(chunks[0]!.choices![0]!.delta!.role, "assistant");
      t.is(textOf(chunks), "one two three four");
      const finishes = chunks.flatMap((chunk) => (chunk.choices ?? []).map((choice) => choice.finish_reason).filter(Boolean));
      t.deepEqual(finishes, ["stop"]);
      const last = chunks.at(-1)!;
      t.deepEqual(last.choices, []);
      t.true(last.usage!.completion_tokens > 0);
      t.true(chunks.every((chunk) => chunk.object === "chat.completion.chunk"));
    });
  });

  test(`${vendor.type}: tool call round trip`, async (t) => {
    await withVendor(vendor, async (chat, fake) => {
      fake.replyToolCall({ id: "call_weather_1", name: "get_weather", args: { city: "Oslo" } });
      const first = await chat.complete(request([{ role: "user", content: "Weather in Oslo?" }], { tools: [weatherTool] }), callOptions());
      t.is(first.body.choices[0]!.finish_reason, "tool_calls");
      const call = message(first.body).tool_calls[0];
      t.is(call.type, "function");
      t.is(call.function.name, "get_weather");
      t.deepEqual(JSON.parse(call.function.arguments), { city: "Oslo" });
      t.truthy(call.id);

      fake.replyText("It is 4°C.");
      const followUp = request(
        [
          { role: "user", content: "Weather in Oslo?" },
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: call.id, content: "4°C, cloudy" },
        ],
        { tools: [weatherTool] },
      );
      const second = await chat.complete(followUp, callOptions());
      t.is(message(second.body).content, "It is 4°C.");
      t.deepEqual(vendor.sentToolResult(fake.lastBody()), vendor.expectedToolResult({ id: call.id, name: "get_weather", args: {} }, "4°C, cloudy"));
    });
  });

  test(`${vendor.type}: streamed tool call fragments (header first, then arguments)`, async (t) => {
    await withVendor(vendor, async (chat, fake) => {
      fake.replyToolCall({ id: "call_weather_2", name: "get_weather", args: { city: "Bergen", days: 3 } });
      const chunks = await collect(chat, request([{ role: "user", content: "Weather?" }], { tools: [weatherTool], stream: true }));
      t.is(chunks[0]!.choices![0]!.delta!.role, "assistant");
      const [call] = assembleToolCalls(chunks);
      t.truthy(call!.firstFragment.id);
      t.is(call!.firstFragment.type, "function");
      t.is(call!.firstFragment.function.name, "get_weather");
      t.is(call!.name, "get_weather");
      t.deepEqual(JSON.parse(call!.arguments), { city: "Bergen", days: 3 });
      const finish = chunks.find((chunk) => chunk.choices?.[0]?.finish_reason);
      t.is(finish!.choices![0]!.finish_reason, "tool_calls");
      t.deepEqual(chunks.at(-1)!.choices, []);
    });
  });

  test(`${vendor.type}: a data: image reaches the vendor in its image format`, async (t) => {
    await withVendor(vendor, async (chat, fake) => {
      const data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg==";
      const content = [
        { type: "text", text: "What is in this picture?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${data}`, detail: "low" } },
      ];
      const { body } = await chat.complete(request([{ role: "user", content }]), callOptions());
      t.truthy(message(body).content);
      t.deepEqual(vendor.sentImage(fake.lastBody()), vendor.expectedImage("image/png", data));
    });
  });

  test(`${vendor.type}: a vendor 400 becomes UpstreamHttpError with an OpenAI envelope`, async (t) => {
    await withVendor(vendor, async (chat, fake) => {
      fake.replyError(400);
      const error = await t.throwsAsync(chat.complete(request([{ role: "user", content: "x" }]), callOptions()), { instanceOf: UpstreamHttpError });
      t.is(error!.status, 400);
      t.is(error!.contentType, "application/json");
      const envelope = JSON.parse(error!.body);
      t.is(typeof envelope.error.message, "string");
      t.is(envelope.error.type, "invalid_request_error");
      t.true("param" in envelope.error && "code" in envelope.error);
      if (vendor.type !== "openai") t.notDeepEqual(JSON.parse(error!.vendorBody!), envelope);
    });
  });

  test(`${vendor.type}: a 429 keeps Retry-After, for complete and stream`, async (t) => {
    await withVendor(vendor, async (chat, fake) => {
      fake.replyError(429, "2");
      const error = await t.throwsAsync(chat.complete(request([{ role: "user", content: "x" }]), callOptions()), { instanceOf: UpstreamHttpError });
      t.is(error!.status, 429);
      t.is(error!.retryAfterMs, 2000);
      fake.replyError(429, "3");
      const streamError = await t.throwsAsync(chat.stream(request([{ role: "user", content: "x" }], { stream: true }), callOptions()), {
        instanceOf: UpstreamHttpError,
      });
      t.is(streamError!.retryAfterMs, 3000);
      t.is(JSON.parse(streamError!.body).error.type.length > 0, true);
    });
  });

  test(`${vendor.type}: usage numbers, complete and stream`, async (t) => {
    await withVendor(vendor, async (chat, fake) => {
      let expected = fake.replyUsage();
      const { body } = await chat.complete(request([{ role: "user", content: "x" }]), callOptions());
      t.like(body.usage, expected);
      expected = fake.replyUsage();
      const chunks = await collect(chat, request([{ role: "user", content: "x" }], { stream: true }));
      t.like(chunks.at(-1)!.usage!, expected);
    });
  });
}
