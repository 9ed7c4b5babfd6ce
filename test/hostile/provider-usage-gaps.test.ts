// Gaps left after issue 20's fixes, each through the real gateway and the vendor fakes:
// 1. every top-level field an OpenAI-compatible server reads as its output cap (llama.cpp's
//    n_predict, TabbyAPI's max_length) is taken out, the smallest named is reserved and the one
//    cap sent; text-generation-webui's auto_max_new_tokens, which voids the cap, never leaves gw;
//    a cap that is not a positive integer is named as such, not as missing.
// 2. a Gemini answer without usageMetadata, or without candidatesTokenCount beside text, is
//    missing usage: billed the gateway's estimate (docs/decisions.md §3), chat and messages.
// 3. an Anthropic stream whose message_delta has no output_tokens is missing usage on chat too.
// 4. Gemini maps response_format and reasoning_effort it can honour and refuses the rest (§4).

import test from "ava";
import OpenAI from "openai";
import { GeminiStreamConverter, geminiChatUsage } from "../../src/providers/gemini/convert-from-gemini-chat.js";
import { type FakeGemini, startFakeGemini } from "../fakes/gemini.js";
import { capsOf, type MeteredGateway, startMeteredGateway } from "./_metered-gateway.js";

const chat = (key: string, body: Record<string, unknown>) => metered.chat(key, body);
const messages = (key: string, body: Record<string, unknown>) => metered.messages(key, body);

let metered: MeteredGateway;
let gemini: FakeGemini;

const roomy = { context_length: 200_000, max_output_tokens: 64_000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } };

test.before(async () => {
  gemini = await startFakeGemini();
  metered = await startMeteredGateway((config) => {
    config.providers.gem = { type: "gemini", baseUrl: gemini.url, apiKey: "AIza-up" };
    config.providers.upc = { type: "openai", baseUrl: config.providers.up.baseUrl, apiKey: "sk-up", maxTokensField: "max_completion_tokens" };
    config.routes.push({ prefix: "g/", provider: "gem", priority: 1 }, { prefix: "mc/", provider: "upc", priority: 1 });
    config.models.push(
      { id: "m/roomy", name: "Roomy", ...roomy },
      { id: "mc/roomy", name: "Roomy, max_completion_tokens", ...roomy },
      { id: "c/roomy", name: "Claude roomy", ...roomy },
      { id: "g/roomy", name: "Gemini roomy", ...roomy },
    );
  });
});

test.after.always(async () => {
  await metered?.close();
  await gemini?.close();
});

test.beforeEach(() => {
  metered.openai.reset();
  metered.anthropic.reset();
  gemini.reset();
});

interface SeenUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  input_tokens?: number;
  output_tokens?: number;
}

/** The usage the client was told of: an answer's, or a stream's last usage (chat usage chunk, message_start / message_delta). */
async function usageSeen(response: Response): Promise<SeenUsage> {
  const text = await response.text();
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) return (JSON.parse(text) as { usage: SeenUsage }).usage;
  let usage: SeenUsage = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    const data = JSON.parse(line.slice(6)) as { usage?: SeenUsage | null; message?: { usage?: SeenUsage } };
    const found = data.usage ?? data.message?.usage;
    if (found) usage = { ...usage, ...found };
  }
  return usage;
}

const outputOf = (usage: SeenUsage) => usage.completion_tokens ?? usage.output_tokens ?? Number.NaN;
const hi = [{ role: "user", content: "hi" }];
const client = (key: string) => new OpenAI({ baseURL: metered.gateway.v1, apiKey: key, maxRetries: 0 });

// --- 1. output caps other servers read ------------------------------------------------------------

test.serial("llama.cpp reads n_predict before max_tokens: n_predict never reaches it, the smaller cap is reserved and sent", async (t) => {
  const key = await metered.keyWithCredits("n-predict", 1_000_000);
  metered.openai.set({ capReading: "llama.cpp" });
  for (const stream of [false, true]) {
    const response = await chat(key, { model: "m/roomy", max_tokens: 16, n_predict: 5000, stream, messages: hi });
    t.is(response.status, 200, `stream ${stream}`);
    t.is(outputOf(await usageSeen(response)), 16, `stream ${stream}: the upstream wrote what was reserved`);
    t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { max_tokens: 16 }, `stream ${stream}`);
  }
  // llama.cpp reads n_cmpl before n: eight answers where one was reserved. It never leaves gw.
  const many = await chat(key, { model: "m/roomy", max_tokens: 16, n_cmpl: 8, messages: hi });
  t.is(many.status, 200);
  t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { max_tokens: 16 });
  // The other way round: n_predict is the caller's cap when it is the smaller, sent in the provider's field.
  const smaller = await chat(key, { model: "mc/roomy", max_tokens: 900, n_predict: 12, messages: hi });
  t.is(smaller.status, 200);
  t.is(outputOf(await usageSeen(smaller)), 12);
  t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { max_completion_tokens: 12 });
  t.is(smaller.headers.get("x-service-max-tokens-filled"), null, "the request named a cap");
  t.true(
    metered.rows("n-predict").every((row) => row.overage === undefined && row.units.completion_tokens! <= 16),
    JSON.stringify(metered.rows("n-predict")),
  );
});

test.serial("TabbyAPI's max_length and text-generation-webui's auto_max_new_tokens never leave gw", async (t) => {
  const key = await metered.keyWithCredits("other-caps", 1_000_000);
  metered.openai.set({ capReading: "tabbyAPI" });
  const tabby = await chat(key, { model: "m/roomy", max_tokens: 400, max_length: 8, messages: hi });
  t.is(tabby.status, 200);
  t.is(outputOf(await usageSeen(tabby)), 8, "the smallest cap named is the one reserved and sent");
  t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { max_tokens: 8 });

  // auto_max_new_tokens: true makes text-generation-webui write to the end of the context, whatever max_tokens says.
  metered.openai.set({ capReading: "text-generation-webui" });
  for (const stream of [false, true]) {
    const webui = await chat(key, { model: "m/roomy", max_tokens: 16, auto_max_new_tokens: true, stream, messages: hi });
    t.is(webui.status, 200);
    t.is(outputOf(await usageSeen(webui)), 16, `stream ${stream}`);
    t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { max_tokens: 16 }, `stream ${stream}`);
  }
  // The messages endpoint takes them out the same way.
  metered.openai.set({ capReading: "llama.cpp" });
  const viaMessages = await messages(key, { model: "m/roomy", max_tokens: 16, n_predict: 5000, max_length: 5000, messages: hi });
  t.is(viaMessages.status, 200, await viaMessages.clone().text());
  t.is(outputOf(await usageSeen(viaMessages)), 16);
  t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { max_tokens: 16 });
  t.true(metered.rows("other-caps").every((row) => row.overage === undefined));
});

test.serial("a cap that is present but not a positive integer is 400 saying so, not 'missing'", async (t) => {
  const key = await metered.keyWithCredits("cap-values", 1_000_000);
  const cases: Array<[string, unknown]> = [
    ["max_tokens", "5000"],
    ["max_tokens", 16.5],
    ["max_tokens", -1],
    ["max_completion_tokens", true],
    ["n_predict", -1],
    ["max_length", 0],
  ];
  for (const [field, value] of cases) {
    const response = await chat(key, { model: "m/roomy", [field]: value, messages: hi });
    t.is(response.status, 400, `${field}: ${JSON.stringify(value)}`);
    const { error } = (await response.json()) as { error: { message: string; param: string; type: string } };
    t.is(error.param, field);
    t.is(error.type, "invalid_request_error");
    t.is(error.message, `Invalid '${field}': must be a positive integer.`, `${field}: ${JSON.stringify(value)}`);
  }
  t.is(metered.openai.requests.length, 0, "nothing reached the upstream");
  // A missing required parameter still says so.
  const missing = await chat(key, { model: "m/roomy" });
  t.is(((await missing.json()) as { error: { message: string } }).error.message, "Missing required parameter: 'messages'.");

  // The messages endpoint, in Anthropic's words.
  for (const [body, message] of [
    [{ model: "m/roomy", max_tokens: "5000", messages: hi }, "max_tokens: Input should be a valid integer"],
    [{ model: "m/roomy", max_tokens: 16.5, messages: hi }, "max_tokens: Input should be a valid integer"],
    [{ model: "m/roomy", messages: hi }, "max_tokens: Field required"],
  ] as const) {
    const response = await messages(key, body);
    t.is(response.status, 400);
    t.deepEqual(await response.json(), { type: "error", error: { type: "invalid_request_error", message } });
  }
});

// --- 2. Gemini without (complete) usage -----------------------------------------------------------

const GEMINI_TEXT = "word ".repeat(400).trim();

test.serial("Gemini answering without usageMetadata is billed the estimate, on chat and on messages, streamed or not", async (t) => {
  const key = await metered.keyWithCredits("gemini-no-usage", 1_000_000);
  gemini.set({ omitUsage: true, content: GEMINI_TEXT });
  for (const stream of [false, true]) {
    const viaChat = await chat(key, { model: "g/roomy", max_tokens: 2000, stream, messages: hi });
    t.is(viaChat.status, 200);
    const seen = await usageSeen(viaChat);
    // 400 words, about 2000 characters: some 500 tokens at four characters a token.
    t.true(outputOf(seen) >= 400 && seen.prompt_tokens! > 0, `chat stream ${stream}: ${JSON.stringify(seen)}`);

    const viaMessages = await messages(key, { model: "g/roomy", max_tokens: 2000, stream, messages: hi });
    t.is(viaMessages.status, 200);
    const told = await usageSeen(viaMessages);
    t.true(outputOf(told) >= 400 && told.input_tokens! > 0, `messages stream ${stream}: ${JSON.stringify(told)}`);
  }
  const rows = metered.rows("gemini-no-usage");
  t.is(rows.length, 4);
  for (const row of rows) t.true(row.credits >= 400 && row.units.completion_tokens! >= 400, JSON.stringify(row));
});

test.serial("Gemini's usageMetadata with promptTokenCount but no candidatesTokenCount beside text is billed the estimate", async (t) => {
  const key = await metered.keyWithCredits("gemini-prompt-only", 1_000_000);
  gemini.set({ omitCandidatesTokenCount: true, content: GEMINI_TEXT, usage: { promptTokenCount: 3 } });
  for (const stream of [false, true]) {
    const viaChat = await chat(key, { model: "g/roomy", max_tokens: 2000, stream, messages: hi });
    t.is(viaChat.status, 200);
    t.true(outputOf(await usageSeen(viaChat)) >= 400, `chat stream ${stream}`);
    const viaMessages = await messages(key, { model: "g/roomy", max_tokens: 2000, stream, messages: hi });
    t.is(viaMessages.status, 200);
    t.true(outputOf(await usageSeen(viaMessages)) >= 400, `messages stream ${stream}`);
  }
  for (const row of metered.rows("gemini-prompt-only")) t.true(row.credits >= 400, JSON.stringify(row));
});

test("Gemini usage: a zero output count may be left out where nothing was written (a blocked prompt), not where text was", (t) => {
  const blocked = { promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } };
  t.deepEqual(geminiChatUsage(blocked), { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3, prompt_tokens_details: { cached_tokens: 0 } });
  const answered = { candidates: [{ content: { parts: [{ text: "hello" }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 3 } };
  t.is(geminiChatUsage(answered), undefined);
  t.is(geminiChatUsage({ candidates: answered.candidates }), undefined);
  // Thinking alone (cut at the cap while thinking) wrote no answer: the thoughts are the output.
  const thoughtOnly = { candidates: [{ content: { parts: [{ text: "hm", thought: true }] } }], usageMetadata: { promptTokenCount: 3, thoughtsTokenCount: 9 } };
  t.is(geminiChatUsage(thoughtOnly)?.completion_tokens, 9);

  const converter = new GeminiStreamConverter({ model: "gemini-2.5-flash", created: 1 });
  converter.push({ candidates: [{ content: { parts: [{ text: "hello" }] } }], usageMetadata: { promptTokenCount: 3 } });
  converter.push({ candidates: [{ content: { parts: [{ text: "" }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 3 } });
  t.deepEqual(converter.end(), [], "no usage chunk: the gateway estimates");
});

// --- 3. Anthropic without a final output count ----------------------------------------------------

const WIDE_TEXT = "漢".repeat(20_000);

test.serial("an Anthropic stream whose message_delta has usage {} is billed the estimate on chat completions, as on messages", async (t) => {
  const key = await metered.keyWithCredits("anthropic-no-output", 10_000_000);
  metered.anthropic.set({ omitOutputTokens: true, content: WIDE_TEXT });
  for (const stream of [true, false]) {
    const viaChat = await chat(key, { model: "c/roomy", max_tokens: 30_000, stream, messages: hi });
    t.is(viaChat.status, 200);
    // One token a wide character: 20,000 characters are about 20,000 tokens, not message_start's 1.
    t.true(outputOf(await usageSeen(viaChat)) >= 20_000, `chat stream ${stream}`);
    // The messages endpoint passes Anthropic's own events through: its row (below) holds the estimate.
    const viaMessages = await messages(key, { model: "c/roomy", max_tokens: 30_000, stream, messages: hi });
    t.is(viaMessages.status, 200);
    await viaMessages.text();
  }
  const rows = metered.rows("anthropic-no-output");
  t.is(rows.length, 4);
  for (const row of rows) t.true(row.credits >= 20_000 && row.units.completion_tokens! >= 20_000, JSON.stringify(row));
});

// --- 4. Gemini's response_format and reasoning_effort, through the official SDK -------------------

test.serial("Gemini: json_object and json_schema are mapped, exactly; reasoning_effort is a thinking budget", async (t) => {
  const key = await metered.keyWithCredits("gemini-formats", 1_000_000);
  const openai = client(key);
  const base = { model: "g/roomy", max_tokens: 64, messages: [{ role: "user" as const, content: "hi" }] };
  const sent = () => gemini.requests.at(-1)!.body;
  const contents = [{ role: "user", parts: [{ text: "hi" }] }];

  gemini.set({ content: '{"ok":true}' });
  const asObject = await openai.chat.completions.create({ ...base, response_format: { type: "json_object" } });
  t.is(asObject.choices[0]!.message.content, '{"ok":true}');
  t.deepEqual(sent(), { contents, generationConfig: { maxOutputTokens: 64, responseMimeType: "application/json" } });

  const schema = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"], additionalProperties: false };
  await openai.chat.completions.create({ ...base, response_format: { type: "json_schema", json_schema: { name: "verdict", schema, strict: true } } });
  t.deepEqual(sent(), { contents, generationConfig: { maxOutputTokens: 64, responseMimeType: "application/json", responseJsonSchema: schema } });

  await openai.chat.completions.create({ ...base, response_format: { type: "text" } });
  t.deepEqual(sent(), { contents, generationConfig: { maxOutputTokens: 64 } });

  // Google's own OpenAI facade's budgets; none turns thinking off (Gemini thinks by default).
  for (const [effort, thinkingBudget] of [
    ["low", 1024],
    ["medium", 8192],
    ["high", 24576],
    ["none", 0],
  ] as const) {
    await openai.chat.completions.create({ ...base, reasoning_effort: effort });
    t.deepEqual(sent(), { contents, generationConfig: { maxOutputTokens: 64, thinkingConfig: { thinkingBudget } } }, effort);
  }
});

test.serial("Gemini: a response_format or reasoning_effort it cannot honour is 400 naming the parameter and the provider", async (t) => {
  const key = await metered.keyWithCredits("gemini-refusals", 1_000_000);
  const openai = client(key);
  const base = { model: "g/roomy", max_tokens: 64, messages: [{ role: "user" as const, content: "hi" }] };
  const refusals: Array<[Record<string, unknown>, string]> = [
    [{ response_format: { type: "__proto__" } }, "response_format"],
    [{ response_format: { type: "grammar", grammar: "root ::= 'x'" } }, "response_format"],
    [{ response_format: "json" }, "response_format"],
    [{ response_format: { type: "json_schema", json_schema: { name: "x", schema: "not a schema" } } }, "response_format.json_schema.schema"],
    [{ reasoning_effort: "minimal" }, "reasoning_effort"],
    [{ reasoning_effort: "__proto__" }, "reasoning_effort"],
  ];
  for (const [extra, param] of refusals) {
    const error = await openai.chat.completions.create({ ...base, ...extra } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    t.true(error instanceof OpenAI.BadRequestError, JSON.stringify(extra));
    const refused = error as InstanceType<typeof OpenAI.BadRequestError>;
    t.is(refused.param, param, JSON.stringify(extra));
    t.regex(refused.message, /\(provider gem\)/, JSON.stringify(extra));
    t.regex(refused.message, /Gemini/, JSON.stringify(extra));
  }
  t.is(gemini.requests.length, 0, "nothing reached Gemini");
  t.is(metered.rows("gemini-refusals").length, 0, "nothing billed");
});
