// The official openai SDK against a running gw, routed to the fake OpenAI-compatible upstream.
import test from "ava";
import OpenAI from "openai";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let fake: FakeOpenAI;
let backup: FakeOpenAI;
let gateway: TestGateway;
let proKey: string;
let freeKey: string;

test.before(async () => {
  fake = await startFakeOpenAI();
  backup = await startFakeOpenAI();
  const home = await makeHome((config) => {
    config.providers = {
      fake: { type: "openai", baseUrl: fake.url, apiKey: "sk-upstream-secret-1" },
      backup: { type: "openai", baseUrl: backup.url, apiKey: "sk-upstream-secret-2" },
    };
    config.routes = [
      { prefix: "fake/", provider: "fake", priority: 10 },
      { prefix: "free/", provider: "fake", priority: 10, freeTier: true },
      { prefix: "pinned", provider: "fake", model: "pinned-upstream-model" },
      {
        prefix: "auto",
        upstreams: [
          { provider: "fake", model: "small", weight: 1 },
          { provider: "backup", model: "large", weight: 1 },
        ],
      },
    ];
    config.models = [{ id: "fake/gpt-test", name: "GPT Test", context_length: 8192, created: 1700000000, pricing: { input_per_mtok: 1, output_per_mtok: 2 } }];
  });
  gateway = await startTestGateway(home);
  proKey = await addKey(home, "alice", "pro");
  freeKey = await addKey(home, "fred", "free");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
  await backup?.close();
});

test.beforeEach(() => {
  fake.reset();
  backup.reset();
});

const client = (key = proKey) => new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });

test.serial("non-stream completion names the model, strips the prefix upstream and reports usage", async (t) => {
  const completion = await client().chat.completions.create({ model: "fake/gpt-test", messages: [{ role: "user", content: "hello there" }] });
  t.is(completion.object, "chat.completion");
  t.is(completion.model, "fake/gpt-test");
  t.is(completion.choices[0]!.message.content, "echo: hello there");
  t.is(completion.choices[0]!.finish_reason, "stop");
  t.truthy(completion.usage && completion.usage.total_tokens > 0);
  t.is(fake.requests.length, 1);
  t.is(fake.requests[0]!.body.model, "gpt-test");
  t.is(fake.requests[0]!.headers.authorization, "Bearer sk-upstream-secret-1");
});

test.serial("a route naming `model` sends that model upstream", async (t) => {
  await client().chat.completions.create({ model: "pinned", messages: [{ role: "user", content: "x" }] });
  t.is(fake.requests[0]!.body.model, "pinned-upstream-model");
});

test.serial("stream: role first, content deltas, usage chunk before [DONE] even when not asked", async (t) => {
  const stream = await client().chat.completions.create({ model: "fake/gpt-test", stream: true, messages: [{ role: "user", content: "one two three" }] });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  t.is(chunks[0]!.choices[0]!.delta.role, "assistant");
  const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
  t.is(text, "echo: one two three");
  const last = chunks.at(-1)!;
  t.deepEqual(last.choices, []);
  t.truthy(last.usage && last.usage.completion_tokens > 0);
  t.true(chunks.every((chunk) => chunk.model === "fake/gpt-test"));
  t.deepEqual(fake.requests[0]!.body.stream_options, { include_usage: true });
});

test.serial("stream: each chunk reaches the client while the upstream is still holding the next one", async (t) => {
  // The upstream writes the role chunk and the first content chunk, then waits for the test.
  fake.enqueue({ holdAfterEvents: 2 });
  const safety = setTimeout(() => fake.releaseHeld(), 5_000);
  try {
    const stream = await client().chat.completions.create({ model: "fake/gpt-test", stream: true, messages: [{ role: "user", content: "one two three" }] });
    const heldWhenReceived: number[] = [];
    let text = "";
    for await (const chunk of stream) {
      const content = chunk.choices[0]?.delta.content ?? "";
      if (content && heldWhenReceived.length === 0) {
        heldWhenReceived.push(fake.held());
        fake.releaseHeld();
      }
      text += content;
    }
    t.deepEqual(heldWhenReceived, [1], "the first content chunk arrived before the upstream sent the next one");
    t.is(text, "echo: one two three");
  } finally {
    clearTimeout(safety);
  }
});

test.serial("stream: an upstream that omits usage and role still yields role first and an estimated usage chunk", async (t) => {
  fake.enqueue({ omitUsage: true, omitRole: true });
  const stream = await client().chat.completions.create({
    model: "fake/gpt-test",
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: "user", content: "a b" }],
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  t.is(chunks[0]!.choices[0]!.delta.role, "assistant");
  const last = chunks.at(-1)!;
  t.deepEqual(last.choices, []);
  t.true(last.usage!.prompt_tokens > 0);
  t.true(last.usage!.completion_tokens > 0);
});

test.serial("tool calls stream through and reassemble", async (t) => {
  fake.enqueue({ toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' }] });
  const runner = client().chat.completions.stream({
    model: "fake/gpt-test",
    messages: [{ role: "user", content: "weather?" }],
    tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
  });
  const final = await runner.finalChatCompletion();
  const call = final.choices[0]!.message.tool_calls![0]!;
  t.is(call.type === "function" ? call.function.name : "", "get_weather");
  t.is(call.type === "function" ? call.function.arguments : "", '{"city":"Oslo"}');
  t.is(final.choices[0]!.finish_reason, "tool_calls");
  t.truthy(fake.requests[0]!.body.tools);
});

test.serial("auto picks a concrete upstream by weight and names it in the response", async (t) => {
  const seen = new Set<string>();
  for (let index = 0; index < 30; index += 1) {
    const completion = await client().chat.completions.create({ model: "auto", messages: [{ role: "user", content: "hi" }] });
    seen.add(completion.model);
  }
  t.deepEqual([...seen].sort(), ["backup/large", "fake/small"]);
  t.true(fake.requests.every((request) => request.body.model === "small"));
  t.true(backup.requests.every((request) => request.body.model === "large"));
});

test.serial("unknown model and short alias are 404 model_not_found", async (t) => {
  for (const model of ["nope/model", "gpt-4o", "fake/"]) {
    const error = await t.throwsAsync(client().chat.completions.create({ model, messages: [{ role: "user", content: "x" }] }), {
      instanceOf: OpenAI.NotFoundError,
    });
    t.is(error!.code, "model_not_found");
  }
  t.is(fake.requests.length, 0);
});

test.serial("free key on a route not flagged free-tier is 403 model_requires_upgrade; free-tier route works", async (t) => {
  const error = await t.throwsAsync(client(freeKey).chat.completions.create({ model: "fake/gpt-test", messages: [{ role: "user", content: "x" }] }), {
    instanceOf: OpenAI.PermissionDeniedError,
  });
  t.is(error!.code, "model_requires_upgrade");
  const ok = await client(freeKey).chat.completions.create({ model: "free/gpt-test", messages: [{ role: "user", content: "x" }] });
  t.is(ok.model, "free/gpt-test");
  const auto = await t.throwsAsync(client(freeKey).chat.completions.create({ model: "auto", messages: [{ role: "user", content: "x" }] }));
  t.is((auto as InstanceType<typeof OpenAI.APIError>).code, "model_requires_upgrade");
});

test.serial("temperature out of range and malformed messages are 400 naming the parameter", async (t) => {
  const high = await t.throwsAsync(client().chat.completions.create({ model: "fake/gpt-test", temperature: 2.5, messages: [{ role: "user", content: "x" }] }), {
    instanceOf: OpenAI.BadRequestError,
  });
  t.is((high as InstanceType<typeof OpenAI.APIError>).param, "temperature");
  t.regex(high!.message, /temperature/);
  const cases: Array<[unknown, string]> = [
    [[], "messages"],
    [[{ role: "wizard", content: "x" }], "messages[0].role"],
    [[{ role: "user" }], "messages[0].content"],
    [[{ role: "user", content: 42 }], "messages[0].content"],
    [[{ role: "tool", content: "x" }], "messages[0].tool_call_id"],
  ];
  for (const [messages, param] of cases) {
    const error = await t.throwsAsync(client().chat.completions.create({ model: "fake/gpt-test", messages: messages as never }), {
      instanceOf: OpenAI.BadRequestError,
    });
    t.is((error as InstanceType<typeof OpenAI.APIError>).param, param, JSON.stringify(messages));
  }
  t.is(fake.requests.length, 0);
});

test.serial("an upstream 4xx about a value is passed through verbatim with its status", async (t) => {
  const body = { error: { message: "max_tokens is too large: 999999", type: "invalid_request_error", param: "max_tokens", code: "invalid_value" } };
  fake.enqueue({ status: 400, errorBody: body });
  const response = await fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${proKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "fake/gpt-test", messages: [{ role: "user", content: "x" }], max_tokens: 999999 }),
  });
  t.is(response.status, 400);
  t.deepEqual(await response.json(), body);
  t.truthy(response.headers.get("x-request-id"));
  t.is(fake.requests.length, 1, "no retry or fallback on a value error");
});

test.serial("models list: concrete models in the spec's shape, auto never listed", async (t) => {
  const response = await fetch(`${gateway.v1}/models`, { headers: { authorization: `Bearer ${proKey}` } });
  const body = await response.json();
  t.deepEqual(body, {
    object: "list",
    data: [
      {
        id: "fake/gpt-test",
        name: "GPT Test",
        architecture: { input_modalities: ["text"], output_modalities: ["text"] },
        context_length: 8192,
        created: 1700000000,
        pricing: { prompt: "0.000001", completion: "0.000002" },
      },
    ],
    // Routes without models[] entries, at billing.defaultChatPricing: beside `data`, never in it.
    aliases: [{ id: "pinned", pricing: { prompt: "0.000001", completion: "0.000003" } }],
    prefixes: [{ prefix: "free/", pricing: { prompt: "0.000001", completion: "0.000003" } }],
  });
  const models = await client().models.list();
  t.deepEqual(
    models.data.map((model) => model.id),
    ["fake/gpt-test"],
  );
});

test.serial("missing, malformed, unknown and revoked keys get the identical 401 body", async (t) => {
  const bodies = new Set<string>();
  const attempts: Array<Record<string, string>> = [
    {},
    { authorization: "Bearer" },
    { authorization: "Basic abc" },
    { authorization: "Bearer not-a-gw-key" },
    { authorization: `Bearer gw_${"A".repeat(43)}` },
    { authorization: `Bearer ${proKey}x` },
  ];
  for (const headers of attempts) {
    const response = await fetch(`${gateway.v1}/chat/completions`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ model: "fake/gpt-test", messages: [{ role: "user", content: "x" }] }),
    });
    t.is(response.status, 401);
    bodies.add(await response.text());
  }
  t.is(bodies.size, 1);
  t.deepEqual(JSON.parse([...bodies][0]!), {
    error: { message: "Invalid API key. Send a valid gw key as `Authorization: Bearer <key>`.", type: "authentication_error", code: "invalid_api_key" },
  });
  const error = await t.throwsAsync(client("gw_nope").models.list(), { instanceOf: OpenAI.AuthenticationError });
  t.is(error!.code, "invalid_api_key");
});
