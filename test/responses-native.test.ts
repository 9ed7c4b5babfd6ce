// POST /v1/responses passed through natively to an `openai` provider marked `responsesApi: true`
// (docs/decisions.md §19): the official openai SDK against a real gw, the fake OpenAI upstream
// serving /v1/responses. The upstream gets the client's body (upstream model, the reserved
// max_output_tokens, store false, the stored conversation in place of previous_response_id);
// the client gets the upstream's Response with gw's ids and the public model, reasoning items
// and their encrypted content unchanged; billing, storage, fallback and errors are chat's.

import test from "ava";
import OpenAI from "openai";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { type FakeAnthropic, startFakeAnthropic } from "./fakes/anthropic.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { FAKE_REASONING_TOKENS } from "./fakes/openai-responses.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { namedEvents } from "./helpers/named-events.js";

const PRICING = { input_per_mtok: 3, output_per_mtok: 15 };

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  const home = await makeHome((config) => {
    // No retries and no breaker on the native provider: a test's one failure goes straight to the fallback.
    const once = { retries: 0, breakerFailureThreshold: 0 };
    config.providers = {
      native: { type: "openai", baseUrl: openai.url, apiKey: "sk-native-upstream", responsesApi: true, upstream: once },
      compat: { type: "openai", baseUrl: openai.url, apiKey: "sk-compat-upstream" },
      claude: { type: "anthropic", baseUrl: anthropic.url, apiKey: "sk-ant-upstream" },
    };
    config.routes = [
      { prefix: "native/", provider: "native", priority: 10 },
      { prefix: "compat/", provider: "compat", priority: 10 },
      { prefix: "mixed/", provider: "native", priority: 10 },
      { prefix: "mixed/", provider: "claude", priority: 5, model: "claude-sonnet-4-5" },
    ];
    config.models = [
      { id: "native/gpt-5", name: "GPT-5", context_length: 200_000, max_output_tokens: 8000, pricing: PRICING },
      { id: "compat/gpt-x", name: "GPT X", context_length: 100_000, pricing: PRICING },
      { id: "mixed/gpt-5", name: "GPT-5 or Claude", context_length: 200_000, pricing: PRICING },
    ];
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "nadia", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await openai?.close();
  await anthropic?.close();
});

test.beforeEach(() => {
  openai.reset();
  anthropic.reset();
});

const client = () => new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
const rows = () => UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "responses");
const upstreamCalls = (path: string) => openai.requests.filter((request) => request.path === path);
const GW_RESPONSE_ID = /^resp_[0-9a-f]{48}$/;
const gwItemId = (prefix: string, responseId: string, index: number) => `${prefix}_${responseId.slice(5)}o${index.toString(16).padStart(4, "0")}`;

test.serial("the fake upstream's /v1/responses is what the official SDK reads, streamed or not", async (t) => {
  const direct = new OpenAI({ baseURL: openai.url, apiKey: "sk-direct", maxRetries: 0 });
  const body = {
    model: "gpt-5",
    input: "hi",
    reasoning: { effort: "low" as const, summary: "auto" as const },
    include: ["reasoning.encrypted_content" as const],
  };
  const created = await direct.responses.create(body);
  t.is(created.output_text, "echo: hi");
  const reasoning = created.output[0];
  t.is(reasoning?.type, "reasoning");
  t.regex((reasoning as { encrypted_content?: string }).encrypted_content ?? "", /^gAAAAAB/);
  const streamed = await direct.responses.stream(body).finalResponse();
  t.is(streamed.output_text, "echo: hi");
  t.deepEqual(
    streamed.output.map((item) => item.type),
    ["reasoning", "message"],
  );
  t.truthy((streamed.output[0] as { encrypted_content?: string }).encrypted_content);
  t.is(streamed.usage?.output_tokens_details.reasoning_tokens, FAKE_REASONING_TOKENS);
});

test.serial(
  "create: the upstream's Response with gw's ids and the public model; the client's body forwarded with the reserved cap and store false",
  async (t) => {
    openai.enqueue({ content: "Hello natively", usage: { prompt_tokens: 20, completion_tokens: 9 } });
    const { data: response, response: http } = await client()
      .responses.create({
        model: "native/gpt-5",
        instructions: "Be brief.",
        input: "hello",
        max_output_tokens: 300,
        reasoning: { effort: "low", summary: "auto" },
        include: ["reasoning.encrypted_content"],
        prompt_cache_key: "cache-7",
        metadata: { ticket: "42" },
        text: { format: { type: "text" }, verbosity: "low" },
        tools: [{ type: "web_search" }, { type: "file_search", vector_store_ids: ["vs_1"] }],
        // A field gw does not know: the upstream judges it.
        safety_identifier: "user-9",
        // Refused on a converted upstream; the native one honours it.
        truncation: "auto",
      })
      .withResponse();
    t.regex(response.id, GW_RESPONSE_ID);
    t.is(response.model, "native/gpt-5");
    t.is(response.output_text, "Hello natively");
    t.deepEqual(
      response.output.map((item) => [item.type, (item as { id?: string }).id]),
      [
        ["reasoning", gwItemId("rs", response.id, 0)],
        ["message", gwItemId("msg", response.id, 1)],
      ],
    );
    t.regex((response.output[0] as { encrypted_content?: string }).encrypted_content ?? "", /^gAAAAAB/);
    t.deepEqual(response.usage as unknown, {
      input_tokens: 20,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 9,
      output_tokens_details: { reasoning_tokens: FAKE_REASONING_TOKENS },
      total_tokens: 29,
      // What the call was charged (docs/decisions.md §24): 20 and 9 tokens at $3 and $15 per million.
      gw_credits: 20 * 3 + 9 * 15,
    });
    t.is(http.headers.get("x-service-tools-left-out"), null, "the native upstream serves its own hosted tools");
    t.is(http.headers.get("x-service-params-ignored"), null, "the native upstream takes every parameter");

    t.is(upstreamCalls("/v1/chat/completions").length, 0);
    const [sent] = upstreamCalls("/v1/responses");
    t.is(sent?.headers.authorization, "Bearer sk-native-upstream");
    t.like(sent?.body, {
      model: "gpt-5",
      instructions: "Be brief.",
      input: "hello",
      max_output_tokens: 300,
      store: false,
      reasoning: { effort: "low", summary: "auto" },
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: "cache-7",
      metadata: { ticket: "42" },
      text: { format: { type: "text" }, verbosity: "low" },
      safety_identifier: "user-9",
      truncation: "auto",
    });
    t.deepEqual(sent?.body.tools, [{ type: "web_search" }, { type: "file_search", vector_store_ids: ["vs_1"] }]);
    t.false("previous_response_id" in sent!.body);
    t.false("stream" in sent!.body && sent!.body.stream === true);

    const row = rows().at(-1)!;
    t.like(row, { model: "native/gpt-5", provider: "native", credits: 20 * 3 + 9 * 15 });
    t.deepEqual(row.units, { prompt_tokens: 20, completion_tokens: 9 });
  },
);

test.serial("an upstream that reports no usage: the estimate is billed and shown in its place, as chat's", async (t) => {
  openai.enqueue({ content: "no usage here", omitUsage: true });
  const response = await client().responses.create({ model: "native/gpt-5", input: "count me" });
  const usage = response.usage;
  t.truthy(usage);
  t.true(usage!.input_tokens > 0 && usage!.output_tokens > 0);
  t.is(usage!.total_tokens, usage!.input_tokens + usage!.output_tokens);
  const row = rows().at(-1)!;
  t.deepEqual(row.units, { prompt_tokens: usage!.input_tokens, completion_tokens: usage!.output_tokens });
  t.is(row.credits, usage!.input_tokens * 3 + usage!.output_tokens * 15);
});

test.serial("a request naming no max_output_tokens: the upstream gets the cap its balance affords, said in the header", async (t) => {
  const { response: http } = await client().responses.create({ model: "native/gpt-5", input: "hi" }).withResponse();
  const filled = http.headers.get("x-service-max-tokens-filled");
  t.truthy(filled);
  t.is(upstreamCalls("/v1/responses")[0]?.body.max_output_tokens, Number(filled));
  t.is(Number(filled), 8000, "the model's own output limit, which a pro balance pays for");
});

test.serial("stream: every event passed through in order, ids and model rewritten, usage billed from response.completed", async (t) => {
  openai.enqueue({ content: "one two three", usage: { prompt_tokens: 11, completion_tokens: 5 } });
  const rowsBefore = rows().length;
  const stream = client().responses.stream({
    model: "native/gpt-5",
    input: [{ role: "user", content: [{ type: "input_text", text: "count" }] }],
    reasoning: { effort: "medium" },
    include: ["reasoning.encrypted_content"],
  });
  const events: Array<{ type: string; sequence_number: number; item_id?: string; item?: { id?: string } }> = [];
  stream.on("event", (event) => events.push(event as never));
  const final = await stream.finalResponse();
  t.regex(final.id, GW_RESPONSE_ID);
  t.is(final.model, "native/gpt-5");
  t.is(final.output_text, "one two three");
  t.deepEqual(
    events.map((event) => event.sequence_number),
    events.map((_event, index) => index),
    "the upstream's sequence numbers, none left out",
  );
  t.deepEqual(events.map((event) => event.type).slice(0, 3), ["response.created", "response.in_progress", "response.output_item.added"]);
  t.is(events.at(-1)?.type, "response.completed");
  const messageId = gwItemId("msg", final.id, 1);
  t.true(
    events.filter((event) => event.type === "response.output_text.delta").every((event) => event.item_id === messageId),
    "deltas name gw's item id",
  );
  t.deepEqual(
    events.filter((event) => event.type === "response.output_item.added").map((event) => event.item?.id),
    [gwItemId("rs", final.id, 0), messageId],
  );
  t.truthy((final.output[0] as { encrypted_content?: string }).encrypted_content);
  const sent = upstreamCalls("/v1/responses")[0]!.body;
  t.is(sent.stream, true);
  t.is(sent.store, false);
  t.deepEqual(sent.input, [{ role: "user", content: [{ type: "input_text", text: "count" }] }]);
  t.is(rows().length, rowsBefore + 1);
  t.like(rows().at(-1), { provider: "native", credits: 11 * 3 + 5 * 15 });
  t.is((final.usage as { gw_credits?: number }).gw_credits, 11 * 3 + 5 * 15, "response.completed says what the call cost");
  t.is(final.usage?.output_tokens, 5, "beside the upstream's own usage");
});

test.serial("previous_response_id: the next upstream request carries the stored turn, its reasoning item's encrypted_content unchanged", async (t) => {
  const reasoning = { effort: "high" as const, summary: "auto" as const };
  const include = ["reasoning.encrypted_content" as const];
  const first = await client().responses.create({ model: "native/gpt-5", input: "What is 2+2?", reasoning, include });
  const firstReasoning = first.output[0] as { type: string; encrypted_content?: string; summary: unknown };
  t.is(firstReasoning.type, "reasoning");
  const encrypted = firstReasoning.encrypted_content;
  t.truthy(encrypted);

  openai.enqueue({ content: "Still 4." });
  const second = await client().responses.stream({ model: "native/gpt-5", previous_response_id: first.id, input: "Sure?", reasoning, include }).finalResponse();
  t.is(second.output_text, "Still 4.");
  t.is(second.previous_response_id, first.id);
  const sent = upstreamCalls("/v1/responses")[1]!.body;
  t.false("previous_response_id" in sent, "the upstream keeps nothing: gw sends the conversation");
  t.deepEqual(sent.input, [
    { type: "message", role: "user", content: [{ type: "input_text", text: "What is 2+2?" }] },
    { type: "reasoning", summary: firstReasoning.summary, encrypted_content: encrypted },
    { type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "echo: What is 2+2?", annotations: [], logprobs: [] }] },
    { role: "user", content: "Sure?" },
  ]);

  // Continued on a converted upstream, the reasoning item is dropped (it reads no other model's reasoning).
  openai.enqueue({ content: "converted" });
  await client().responses.create({ model: "compat/gpt-x", previous_response_id: second.id, input: "Bye" });
  const chat = upstreamCalls("/v1/chat/completions")[0]!.body;
  t.deepEqual(
    chat.messages.map((message: { role: string }) => message.role),
    ["user", "assistant", "user", "assistant", "user"],
  );
  t.false(JSON.stringify(chat.messages).includes(encrypted!));
});

test.serial("a reasoning item without encrypted_content is left out of the next native request (the upstream keeps nothing to read it by)", async (t) => {
  const first = await client().responses.create({ model: "native/gpt-5", input: "Think.", reasoning: { effort: "low" } });
  t.deepEqual(
    first.output.map((item) => item.type),
    ["reasoning", "message"],
  );
  const second = await client().responses.create({ model: "native/gpt-5", previous_response_id: first.id, input: "Again." });
  t.is(second.output_text, "echo: Again.");
  t.deepEqual(
    upstreamCalls("/v1/responses")[1]!.body.input.map((item: { type?: string; role?: string }) => item.type ?? item.role),
    ["message", "message", "user"],
  );
});

test.serial("retrieve and input_items read a native response as stored", async (t) => {
  const created = await client().responses.create({
    model: "native/gpt-5",
    input: "keep me",
    reasoning: { effort: "low" },
    include: ["reasoning.encrypted_content"],
  });
  const retrieved = await client().responses.retrieve(created.id);
  // The create said what it was charged; the Response as stored, which a retrieve reads, does not (docs/decisions.md §24).
  const { gw_credits: charged, ...usage } = created.usage as unknown as Record<string, unknown>;
  t.is(typeof charged, "number");
  t.deepEqual(retrieved as unknown, { ...created, output_text: retrieved.output_text, usage });
  const items = await client().responses.inputItems.list(created.id);
  t.is(items.data.length, 1);
  t.like(items.data[0], { type: "message", role: "user", content: [{ type: "input_text", text: "keep me" }] });

  // An item_reference to the stored reasoning item is sent as that item (no id: the upstream keeps nothing).
  await client().responses.create({
    model: "native/gpt-5",
    input: [
      { type: "item_reference", id: created.output[0]!.id! },
      { role: "user", content: "again" },
    ],
  });
  const sent = upstreamCalls("/v1/responses")[1]!.body;
  t.deepEqual(sent.input[0], {
    type: "reasoning",
    summary: (created.output[0] as { summary: unknown }).summary,
    encrypted_content: (created.output[0] as { encrypted_content?: string }).encrypted_content,
  });
});

test.serial("a route with a native upstream first and Anthropic after it: a failed native attempt falls back, converted", async (t) => {
  openai.enqueue({ status: 503 });
  anthropic.enqueue({ content: "from claude" });
  const response = await client().responses.create({ model: "mixed/gpt-5", input: "who answers?", reasoning: { effort: "low" } });
  t.is(response.output_text, "from claude");
  t.is(response.model, "mixed/gpt-5");
  t.regex(response.id, GW_RESPONSE_ID);
  t.is(upstreamCalls("/v1/responses").length, 1, "the native attempt was made");
  t.is(anthropic.requests.length, 1);
  t.like(rows().at(-1), { provider: "claude", model: "mixed/gpt-5" });

  openai.enqueue({ status: 503 });
  anthropic.enqueue({ content: "streamed from claude" });
  const streamed = await client().responses.stream({ model: "mixed/gpt-5", input: "and streamed?" }).finalResponse();
  t.is(streamed.output_text, "streamed from claude");
  t.is(anthropic.requests.length, 2);

  // When the native upstream answers, the route's converted upstream is never asked.
  const native = await client().responses.create({ model: "mixed/gpt-5", input: "native?" });
  t.is(native.output_text, "echo: native?");
  t.is(anthropic.requests.length, 2);
});

test.serial("a provider without responsesApi still converts: its upstream sees /v1/chat/completions", async (t) => {
  openai.enqueue({ content: "converted answer" });
  const response = await client().responses.create({ model: "compat/gpt-x", input: "hi" });
  t.is(response.output_text, "converted answer");
  t.is(upstreamCalls("/v1/responses").length, 0);
  t.is(upstreamCalls("/v1/chat/completions").length, 1);
});

test.serial("an upstream 4xx is passed on in OpenAI's envelope, nothing billed", async (t) => {
  const vendor = {
    error: {
      message: "Invalid value: 'huge'. Supported values are: 'low', 'medium' and 'high'.",
      type: "invalid_request_error",
      param: "reasoning.effort",
      code: "invalid_value",
    },
  };
  openai.enqueue({ status: 400, errorBody: vendor });
  const rowsBefore = rows().length;
  const answer = await fetch(`${gateway.v1}/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "native/gpt-5", input: "x", reasoning: { effort: "high" } }),
  });
  t.is(answer.status, 400);
  t.deepEqual(await answer.json(), vendor);
  t.is(upstreamCalls("/v1/responses").length, 1, "the native upstream's own answer");
  t.is(rows().length, rowsBefore);
});

test.serial("a native stream cut after the first byte ends with response.failed, gw's ids, billed what was relayed", async (t) => {
  openai.enqueue({ content: "a b c d e f", dropAfterChunks: 2 });
  const rowsBefore = rows().length;
  const answer = await fetch(`${gateway.v1}/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "native/gpt-5", input: "go", stream: true }),
  });
  t.is(answer.status, 200);
  const { names, last } = namedEvents<{ sequence_number: number; response: { id: string; status: string; model: string; error: { code: string } } }>(
    await answer.text(),
  );
  t.is(names[0], "response.created");
  t.is(names.at(-1), "response.failed");
  t.false(names.includes("response.completed"));
  t.regex(last.response.id, GW_RESPONSE_ID);
  t.is(last.response.model, "native/gpt-5");
  t.is(last.response.status, "failed");
  t.is(last.response.error.code, "stream_interrupted");
  t.is(last.sequence_number, names.length - 1, "numbered on from the upstream's events");
  t.is(upstreamCalls("/v1/responses").length, 1, "no retry once the stream began");
  t.is(rows().length, rowsBefore + 1);
  t.true(rows().at(-1)!.credits > 0);
});

test.serial("responsesApi on a provider that is not of type openai is a config error naming the provider", async (t) => {
  const home = await makeHome((config) => {
    config.providers = { claude: { type: "anthropic", baseUrl: anthropic.url, apiKey: "sk-ant", responsesApi: true } };
  });
  const error = await t.throwsAsync(startTestGateway(home));
  t.regex(error!.message, /providers\.claude\.responsesApi/);
  t.regex(error!.message, /openai/);
});
