// The official openai SDK against a running gw whose routes lead to the native anthropic and
// gemini providers (fake upstreams): create, stream, tool calls and images, asserting both what
// the client got and what the vendor received.
import test from "ava";
import OpenAI from "openai";
import { type FakeAnthropic, startFakeAnthropic } from "./fakes/anthropic.js";
import { type FakeGemini, startFakeGemini } from "./fakes/gemini.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let gateway: TestGateway;
let key: string;

const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg==";
const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Weather by city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

test.before(async () => {
  anthropic = await startFakeAnthropic();
  gemini = await startFakeGemini();
  const home = await makeHome((config) => {
    config.providers = {
      claude: { type: "anthropic", baseUrl: anthropic.url, apiKey: "sk-ant-upstream" },
      google: { type: "gemini", baseUrl: gemini.url, apiKey: "AIza-upstream" },
    };
    config.routes = [
      { prefix: "claude/", provider: "claude", priority: 10 },
      { prefix: "google/", provider: "google", priority: 10 },
    ];
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "alice", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await anthropic?.close();
  await gemini?.close();
});

test.beforeEach(() => {
  anthropic.reset();
  gemini.reset();
});

const client = () => new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });

const targets = [
  {
    model: "claude/claude-sonnet-4-5",
    upstreamModel: "claude-sonnet-4-5",
    last: () => anthropic.requests.at(-1)!,
    enqueueText: (content: string) => anthropic.enqueue({ content }),
  },
  {
    model: "google/gemini-2.5-flash",
    upstreamModel: "gemini-2.5-flash",
    last: () => gemini.requests.at(-1)!,
    enqueueText: (content: string) => gemini.enqueue({ content }),
  },
];

for (const target of targets) {
  test.serial(`${target.model}: create returns an OpenAI completion with usage`, async (t) => {
    target.enqueueText("Hello there.");
    const completion = await client().chat.completions.create({
      model: target.model,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hi" },
      ],
    });
    t.is(completion.object, "chat.completion");
    t.is(completion.model, target.model);
    t.is(completion.choices[0]!.message.content, "Hello there.");
    t.is(completion.choices[0]!.finish_reason, "stop");
    t.true(completion.usage!.prompt_tokens > 0 && completion.usage!.completion_tokens > 0);
    const sent = target.last();
    if (target.model.startsWith("claude/")) {
      t.is(sent.body.model, target.upstreamModel);
      t.is(sent.body.system, "Be brief.");
      t.is(sent.headers["x-api-key"], "sk-ant-upstream");
    } else {
      t.is(sent.path, `/v1beta/models/${target.upstreamModel}:generateContent`);
      t.deepEqual(sent.body.systemInstruction, { parts: [{ text: "Be brief." }] });
      t.is(sent.headers["x-goog-api-key"], "AIza-upstream");
    }
  });

  test.serial(`${target.model}: stream yields role, text and the usage chunk`, async (t) => {
    target.enqueueText("one two three");
    const stream = await client().chat.completions.create({ model: target.model, stream: true, messages: [{ role: "user", content: "count" }] });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    t.is(chunks[0]!.choices[0]!.delta.role, "assistant");
    t.is(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join(""), "one two three");
    t.true(chunks.some((chunk) => chunk.choices[0]?.finish_reason === "stop"));
    const last = chunks.at(-1)!;
    t.deepEqual(last.choices, []);
    t.true(last.usage!.completion_tokens > 0);
    t.true(chunks.every((chunk) => chunk.model === target.model));
  });

  test.serial(`${target.model}: image as a data: URL reaches the vendor`, async (t) => {
    await client().chat.completions.create({
      model: target.model,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
          ],
        },
      ],
    });
    const sent = target.last().body;
    if (target.model.startsWith("claude/"))
      t.deepEqual(sent.messages[0].content[1], { type: "image", source: { type: "base64", media_type: "image/png", data: png } });
    else t.deepEqual(sent.contents[0].parts[1], { inlineData: { mimeType: "image/png", data: png } });
  });
}

test.serial("claude: a streamed tool call reassembles in the SDK, and the tool result goes back as tool_result", async (t) => {
  anthropic.enqueue({ toolUses: [{ id: "toolu_01A", name: "get_weather", input: { city: "Oslo" } }] }, { content: "4°C and cloudy." });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Oslo?" }];
  const final = await client()
    .chat.completions.stream({ model: "claude/claude-sonnet-4-5", messages, tools: [weatherTool] })
    .finalChatCompletion();
  const call = final.choices[0]!.message.tool_calls![0]!;
  t.is(final.choices[0]!.finish_reason, "tool_calls");
  t.is(call.id, "toolu_01A");
  t.is(call.type === "function" ? call.function.arguments : "", '{"city":"Oslo"}');
  messages.push(final.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "4°C, cloudy" });
  const answer = await client().chat.completions.create({ model: "claude/claude-sonnet-4-5", messages, tools: [weatherTool] });
  t.is(answer.choices[0]!.message.content, "4°C and cloudy.");
  const sent = anthropic.requests.at(-1)!.body;
  t.deepEqual(sent.messages[1].content, [{ type: "tool_use", id: "toolu_01A", name: "get_weather", input: { city: "Oslo" } }]);
  t.deepEqual(sent.messages[2].content, [{ type: "tool_result", tool_use_id: "toolu_01A", content: "4°C, cloudy" }]);
});

test.serial("gemini: a tool call gets a synthesized id, and the result goes back as functionResponse", async (t) => {
  gemini.enqueue({ functionCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }, { content: "4°C and cloudy." });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Oslo?" }];
  const first = await client().chat.completions.create({ model: "google/gemini-2.5-flash", messages, tools: [weatherTool] });
  const call = first.choices[0]!.message.tool_calls![0]!;
  t.is(first.choices[0]!.finish_reason, "tool_calls");
  t.regex(call.id, /^call_/);
  messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: '{"temp_c":4}' });
  const answer = await client().chat.completions.create({ model: "google/gemini-2.5-flash", messages, tools: [weatherTool] });
  t.is(answer.choices[0]!.message.content, "4°C and cloudy.");
  const sent = gemini.requests.at(-1)!.body;
  t.deepEqual(sent.contents[1].parts, [{ functionCall: { name: "get_weather", args: { city: "Oslo" } } }]);
  t.deepEqual(sent.contents[2].parts, [{ functionResponse: { name: "get_weather", response: { temp_c: 4 } } }]);
});

test.serial("a vendor 400 reaches the client as an OpenAI error with the vendor's message", async (t) => {
  anthropic.enqueue({ status: 400, errorBody: { type: "error", error: { type: "invalid_request_error", message: "messages: too many images" } } });
  const error = await t.throwsAsync(client().chat.completions.create({ model: "claude/claude-sonnet-4-5", messages: [{ role: "user", content: "x" }] }), {
    instanceOf: OpenAI.BadRequestError,
  });
  t.is(error!.message, "400 messages: too many images");
  t.is(error!.type, "invalid_request_error");
});

test.serial("a newer Claude model never receives temperature", async (t) => {
  const completion = await client().chat.completions.create({ model: "claude/claude-opus-4-7", temperature: 0.3, messages: [{ role: "user", content: "hi" }] });
  t.is(completion.choices[0]!.message.content, "echo: hi");
  t.false("temperature" in anthropic.requests.at(-1)!.body);
});
