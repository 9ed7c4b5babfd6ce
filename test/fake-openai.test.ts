import test from "ava";
import OpenAI from "openai";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";

function client(fake: FakeOpenAI): OpenAI {
  return new OpenAI({ baseURL: fake.url, apiKey: "x", maxRetries: 0 });
}

async function withFake(fn: (fake: FakeOpenAI) => Promise<void>): Promise<void> {
  const fake = await startFakeOpenAI();
  try {
    await fn(fake);
  } finally {
    await fake.close();
  }
}

const messages = [{ role: "user" as const, content: "hello there world" }];
// prompt: 3 words + 3 per message = 6; reply "echo: hello there world" = 4 pieces

test("non-stream completion echoes the last user message with usage", async (t) => {
  await withFake(async (fake) => {
    const { data, request_id } = await client(fake).chat.completions.create({ model: "gpt-4o-mini", messages }).withResponse();
    t.is(data.object, "chat.completion");
    t.is(data.model, "gpt-4o-mini");
    t.regex(data.id, /^chatcmpl-\d+$/);
    t.truthy(data.system_fingerprint);
    t.is(data.choices[0]?.message.content, "echo: hello there world");
    t.is(data.choices[0]?.finish_reason, "stop");
    t.like(data.usage, { prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 });
    t.truthy(request_id);
    t.is(fake.requests.length, 1);
    t.is(fake.requests[0]?.path, "/v1/chat/completions");
    t.is(fake.requests[0]?.headers.authorization, "Bearer x");
    t.is(fake.requests[0]?.body.model, "gpt-4o-mini");
  });
});

test("stream with include_usage ends with a usage chunk with empty choices", async (t) => {
  await withFake(async (fake) => {
    const stream = await client(fake).chat.completions.create({
      model: "gpt-4o-mini",
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: any[] = [];
    for await (const c of stream) chunks.push(c);
    const last = chunks.at(-1);
    t.deepEqual(last.choices, []);
    t.like(last.usage, { prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 });
    const normal = chunks.slice(0, -1);
    t.true(normal.every((c) => c.usage === null));
    t.deepEqual(normal[0].choices[0].delta, { role: "assistant", content: "" });
    t.is(normal.at(-1).choices[0].finish_reason, "stop");
    t.deepEqual(normal.at(-1).choices[0].delta, {});
    t.is(normal.map((c) => c.choices[0].delta.content ?? "").join(""), "echo: hello there world");
    t.is(new Set(chunks.map((c) => c.id)).size, 1);
    await eventually(() => fake.activeStreams() === 0, "the fake to end its streams");
    t.is(fake.aborted(), 0);
  });
});

test("stream without include_usage sends no usage chunk", async (t) => {
  await withFake(async (fake) => {
    const stream = await client(fake).chat.completions.create({ model: "m", messages, stream: true });
    const chunks: any[] = [];
    for await (const c of stream) chunks.push(c);
    t.true(chunks.every((c) => !("usage" in c) && c.choices.length === 1));
    t.is(chunks.at(-1).choices[0].finish_reason, "stop");
    t.is(chunks.length, 1 + 4 + 1);
  });
});

test("enqueued 429 surfaces as RateLimitError, then falls back to default", async (t) => {
  await withFake(async (fake) => {
    fake.enqueue({ status: 429, retryAfter: "2" });
    const c = client(fake);
    const err = await t.throwsAsync(c.chat.completions.create({ model: "m", messages }), {
      instanceOf: OpenAI.RateLimitError,
    });
    t.is(err?.status, 429);
    t.is((err as InstanceType<typeof OpenAI.RateLimitError>).code, "rate_limit_exceeded");
    t.is((err as InstanceType<typeof OpenAI.RateLimitError>).headers?.get("retry-after"), "2");
    t.truthy((err as InstanceType<typeof OpenAI.RateLimitError>).requestID);
    const ok = await c.chat.completions.create({ model: "m", messages });
    t.is(ok.choices[0]?.message.content, "echo: hello there world");
  });
});

test("tool calls stream as fragments and reassemble", async (t) => {
  await withFake(async (fake) => {
    const args = JSON.stringify({ city: "Oslo", unit: "celsius" });
    fake.set({
      toolCalls: [
        { id: "call_01", name: "get_weather", arguments: args },
        { id: "call_02", name: "get_time", arguments: "{}" },
      ],
    });
    const runner = client(fake).chat.completions.stream({ model: "m", messages, stream_options: { include_usage: true } });
    const chunks: any[] = [];
    runner.on("chunk", (c) => chunks.push(c));
    const final = await runner.finalChatCompletion();
    const choice = final.choices[0]!;
    t.is(choice.finish_reason, "tool_calls");
    const calls = (choice.message.tool_calls ?? []) as Array<{ id: string; function: { name: string; arguments: string } }>;
    t.deepEqual(
      calls.map((tc) => [tc.id, tc.function.name, tc.function.arguments]),
      [
        ["call_01", "get_weather", args],
        ["call_02", "get_time", "{}"],
      ],
    );
    // first delta carries role + first call's id/name; argument pieces come separately
    t.like(chunks[0].choices[0].delta, { role: "assistant", tool_calls: [{ index: 0, id: "call_01" }] });
    t.true(chunks.filter((c) => c.choices[0]?.delta.tool_calls?.[0]?.index === 0).length > 2);
  });
});

test("dropAfterChunks makes the client stream fail without [DONE]", async (t) => {
  await withFake(async (fake) => {
    fake.enqueue({ dropAfterChunks: 2 });
    const stream = await client(fake).chat.completions.create({ model: "m", messages, stream: true });
    const contents: string[] = [];
    await t.throwsAsync(async () => {
      for await (const c of stream) contents.push(c.choices[0]?.delta.content ?? "");
    });
    t.is(contents.join(""), "echo: hello");
    await eventually(() => fake.activeStreams() === 0, "the fake to end its streams");
    t.is(fake.aborted(), 0);
  });
});

test("client abort is counted and releases the active stream", async (t) => {
  await withFake(async (fake) => {
    // One event, then the fake holds the rest: the client sees exactly one chunk before it aborts, however slow the machine.
    fake.set({ holdAfterEvents: 1, content: "a b c d e f g h i j" });
    const ac = new AbortController();
    const stream = await client(fake).chat.completions.create({ model: "m", messages, stream: true }, { signal: ac.signal });
    t.is(fake.activeStreams(), 1);
    // the SDK ends iteration quietly (or throws, depending on timing) once aborted
    let seen = 0;
    try {
      for await (const _c of stream) {
        seen += 1;
        ac.abort();
      }
    } catch {
      // aborted
    }
    t.is(seen, 1);
    await eventually(() => fake.aborted() === 1 && fake.activeStreams() === 0, "the fake to see the abort");
    t.is(fake.requests.length, 1);
  });
});

test("dropConnection, validation errors, models and 404 routes", async (t) => {
  await withFake(async (fake) => {
    const c = client(fake);
    fake.enqueue({ dropConnection: true });
    await t.throwsAsync(c.chat.completions.create({ model: "m", messages }), { instanceOf: OpenAI.APIConnectionError });

    const models = await c.models.list();
    t.true(models.data.length > 0);
    t.is(models.data[0]?.object, "model");

    const post = (body: string) => fetch(`${fake.url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });
    for (const body of ["{not json", JSON.stringify({ messages }), JSON.stringify({ model: "m" }), JSON.stringify({ model: "m", messages: [] })]) {
      const r = await post(body);
      t.is(r.status, 400, body);
      t.truthy(r.headers.get("x-request-id"));
      const j: any = await r.json();
      t.is(j.error.type, "invalid_request_error");
      t.true("param" in j.error && "code" in j.error);
    }

    const nf = await fetch(`${fake.url}/nope`);
    t.is(nf.status, 404);
    t.truthy(((await nf.json()) as any).error.message);

    // every request recorded, including the dropped one and non-chat routes
    t.deepEqual(
      fake.requests.map((r) => `${r.method} ${r.path}`),
      ["POST /v1/chat/completions", "GET /v1/models", ...Array(4).fill("POST /v1/chat/completions"), "GET /v1/nope"],
    );
    t.is(fake.requests[2]?.body, "{not json");
    fake.reset();
    t.is(fake.requests.length, 0);
  });
});
