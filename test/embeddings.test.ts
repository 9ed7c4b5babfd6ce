// POST /v1/embeddings through the official openai SDK, unchanged, against fakes of both wire
// formats: OpenAI's /v1/embeddings (two of them, for fallback) and Gemini's embedContent /
// batchEmbedContents. Floats, the SDK's default base64 (decoded by the SDK itself), arrays of
// texts and of token ids, `dimensions`; credits charged exactly from the upstream's usage (or the
// gateway's estimate for Gemini, which reports none) in one usage row; 402 before any upstream
// call; fallback to the second route when the first answers 5xx, with both attempts in the access
// log; 400 for unknown fields, bad input and `auto`; upstream errors passed through redacted.
import test from "ava";
import OpenAI from "openai";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { fakeEmbedding } from "./fakes/embedding-vectors.js";
import { type FakeGemini, startFakeGemini } from "./fakes/gemini.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { accessOf, addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const OPENAI_KEY = "sk-embeddings-secret-1";
const BACKUP_KEY = "sk-embeddings-secret-2";
const GEMINI_KEY = "gm-embeddings-secret-3";

let openai: FakeOpenAI;
let backup: FakeOpenAI;
let gemini: FakeGemini;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  openai = await startFakeOpenAI();
  backup = await startFakeOpenAI();
  gemini = await startFakeGemini();
  const home = await makeHome((config) => {
    config.upstream = { retries: 0, breakerFailureThreshold: 0 };
    config.providers = {
      openai: { type: "openai", baseUrl: openai.url, apiKey: OPENAI_KEY },
      backup: { type: "openai", baseUrl: backup.url, apiKey: BACKUP_KEY },
      gemini: { type: "gemini", baseUrl: gemini.url, apiKey: GEMINI_KEY },
    };
    // Two routes for one prefix: `openai` first, `backup` when it fails.
    config.routes = [
      { prefix: "openai/", provider: "openai", priority: 10 },
      { prefix: "openai/", provider: "backup", priority: 5 },
      { prefix: "gemini/", provider: "gemini", priority: 10 },
      { prefix: "auto", upstreams: [{ provider: "openai", model: "gpt-4o-mini" }] },
    ];
    // The operator's price for a model wins over the built-in one.
    config.models = [
      { id: "openai/text-embedding-3-large", name: "Large, repriced", context_length: 8191, pricing: { input_per_mtok: 10, output_per_mtok: 0 } },
    ];
    config.plans = { tiny: { monthlyCredits: 5, freeTierOnly: false } };
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "embedder", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await openai?.close();
  await backup?.close();
  await gemini?.close();
});

test.beforeEach(() => {
  openai.reset();
  backup.reset();
  gemini.reset();
});

const client = (apiKey = key) => new OpenAI({ baseURL: gateway.v1, apiKey, maxRetries: 0 });

function embeddingRows(): UsageRow[] {
  return UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "embeddings");
}

async function post(body: unknown, apiKey = key): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${gateway.v1}/embeddings`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), text };
}

test.serial("floats: the vector, the public model, the prefix stripped upstream, the usage", async (t) => {
  const answer = await client().embeddings.create({ model: "openai/text-embedding-3-small", input: "hello world", encoding_format: "float" });
  t.is(answer.object, "list");
  t.is(answer.model, "openai/text-embedding-3-small");
  t.is(answer.data.length, 1);
  t.like(answer.data[0], { object: "embedding", index: 0 });
  t.deepEqual(answer.data[0]!.embedding, fakeEmbedding("hello world", 1536));
  // gw adds what the call was charged (docs/decisions.md §24): the row's credits.
  t.deepEqual(answer.usage, { prompt_tokens: 2, total_tokens: 2, gw_credits: embeddingRows().at(-1)!.credits } as typeof answer.usage);
  t.is(openai.requests.length, 1);
  t.like(openai.requests[0]!.body, { model: "text-embedding-3-small", input: "hello world", encoding_format: "float" });
  t.is(openai.requests[0]!.headers.authorization, `Bearer ${OPENAI_KEY}`);
});

test.serial("the SDK's default base64 goes through and the SDK decodes it to the same floats", async (t) => {
  const answer = await client().embeddings.create({ model: "openai/text-embedding-3-small", input: "hello world" });
  t.is(openai.requests[0]!.body.encoding_format, "base64");
  t.deepEqual(answer.data[0]!.embedding, fakeEmbedding("hello world", 1536));
  // On the wire it is base64 of little-endian float32 bytes.
  const raw = await post({ model: "openai/text-embedding-3-small", input: "hello world", encoding_format: "base64" });
  const bytes = Buffer.from(raw.body.data[0].embedding, "base64");
  t.is(bytes.length, 1536 * 4);
  t.is(bytes.readFloatLE(0), fakeEmbedding("hello world", 1536)[0]!);
});

test.serial("arrays of texts and of token ids keep their order; dimensions reach the upstream", async (t) => {
  const texts = ["first text", "second", "the third one"];
  const answer = await client().embeddings.create({ model: "openai/text-embedding-3-small", input: texts, dimensions: 256 });
  t.deepEqual(
    answer.data.map((item) => item.index),
    [0, 1, 2],
  );
  t.deepEqual(
    answer.data.map((item) => item.embedding),
    texts.map((text) => fakeEmbedding(text, 256)),
  );
  t.deepEqual(answer.usage, { prompt_tokens: 6, total_tokens: 6, gw_credits: embeddingRows().at(-1)!.credits } as typeof answer.usage);
  t.like(openai.requests[0]!.body, { input: texts, dimensions: 256 });

  const tokens = await client().embeddings.create({
    model: "openai/text-embedding-3-small",
    input: [
      [1, 2, 3],
      [40, 50],
    ],
    encoding_format: "float",
  });
  t.deepEqual(
    tokens.data.map((item) => item.embedding),
    [fakeEmbedding("[1,2,3]", 1536), fakeEmbedding("[40,50]", 1536)],
  );
  t.is(tokens.usage.prompt_tokens, 5);
});

test.serial("credits are the upstream's input tokens at the model's input price, in one usage row", async (t) => {
  const rows = embeddingRows().length;
  const text = "word ".repeat(1000).trim();
  // text-embedding-3-small: $0.02 per million tokens; 1000 tokens are 20 credits.
  const answer = await client().embeddings.create({ model: "openai/text-embedding-3-small", input: text });
  t.is(answer.usage.prompt_tokens, 1000);
  const written = embeddingRows().slice(rows);
  t.is(written.length, 1);
  t.like(written[0], { model: "openai/text-embedding-3-small", provider: "openai", units: { input_tokens: 1000 }, credits: 20 });
  t.deepEqual(written[0]!.units, { input_tokens: 1000 });

  // A models[] price wins over the built-in one: $10 per million, 3 tokens are 30 credits.
  openai.enqueue({ usage: { prompt_tokens: 3, completion_tokens: 0 } });
  await client().embeddings.create({ model: "openai/text-embedding-3-large", input: "three words here" });
  t.like(embeddingRows().at(-1), { model: "openai/text-embedding-3-large", units: { input_tokens: 3 }, credits: 30 });
});

test.serial("usage that does not hold is not billed: the gateway's estimate is, and said", async (t) => {
  openai.enqueue({ rawUsage: { prompt_tokens: 5000, total_tokens: 5000 } });
  const answer = await client().embeddings.create({ model: "openai/text-embedding-3-small", input: "x".repeat(400) });
  // 400 ASCII characters: about 100 tokens.
  t.is(answer.usage.prompt_tokens, 100);
  t.like(embeddingRows().at(-1), { units: { input_tokens: 100 }, credits: 2 });
  t.true(quietLogger.lines.some((line) => line.includes("openai reported invalid usage") && line.includes("is more than the inputs can hold")));
});

test.serial("402 before any upstream call when the balance cannot pay the inputs' bound", async (t) => {
  const poor = await addKey(gateway.home, "poor", "tiny");
  const rows = embeddingRows().length;
  // 1000 bytes bound 1002 tokens at $0.02 per million: up to 21 credits, and the plan has 5.
  const refused = await post({ model: "openai/text-embedding-3-small", input: "y".repeat(1000) }, poor);
  t.is(refused.status, 402);
  t.is(refused.body.error.code, "insufficient_credits");
  t.regex(refused.body.error.message, /5 left .*it may cost up to 21 \(at most 1002 input tokens\)/);
  t.is(openai.requests.length + backup.requests.length, 0);
  t.is(embeddingRows().length, rows);
  // A small one fits.
  const small = await post({ model: "openai/text-embedding-3-small", input: "tiny" }, poor);
  t.is(small.status, 200);
});

test.serial("a 5xx from the first route falls back to the second; both attempts are in the access log", async (t) => {
  openai.enqueue({ status: 503 });
  const { data, response } = await client()
    .embeddings.create({ model: "openai/text-embedding-3-small", input: "fall back", encoding_format: "float" })
    .withResponse();
  t.deepEqual(data.data[0]!.embedding, fakeEmbedding("fall back", 1536));
  t.is(openai.requests.length, 1);
  t.is(backup.requests.length, 1);
  t.is(backup.requests[0]!.headers.authorization, `Bearer ${BACKUP_KEY}`);
  t.like(embeddingRows().at(-1), { provider: "backup", model: "openai/text-embedding-3-small" });
  const record = await accessOf(response.headers.get("x-request-id")!);
  t.like(record, { path: "/v1/embeddings", status: 200, provider: "backup", attempts: 2, units: { input_tokens: 2 } });
});

test.serial("an answer without one vector per input is the upstream's fault: the next route answers", async (t) => {
  openai.enqueue({ rawBody: JSON.stringify({ object: "list", data: [], model: "text-embedding-3-small" }) });
  const answer = await client().embeddings.create({ model: "openai/text-embedding-3-small", input: ["a", "b"], encoding_format: "float" });
  t.is(answer.data.length, 2);
  t.is(backup.requests.length, 1);
  t.true(
    quietLogger.lines.some((line) => line.includes("provider openai: invalid response (the answer does not hold one embedding for each of the 2 inputs)")),
  );
});

test.serial("400 naming the field for an unknown parameter, a bad input and `auto`; nothing sent, nothing billed", async (t) => {
  const rows = embeddingRows().length;
  const cases: Array<[unknown, string, RegExp]> = [
    [{ model: "openai/text-embedding-3-small", input: "x", colour: "blue" }, "colour", /^Unknown parameter: 'colour'\.$/],
    [{ model: "openai/text-embedding-3-small" }, "input", /^Missing required parameter: 'input'\.$/],
    [{ model: "openai/text-embedding-3-small", input: "" }, "input", /Invalid 'input'/],
    [{ model: "openai/text-embedding-3-small", input: ["a", 3] }, "input", /a list of token ids/],
    [{ model: "openai/text-embedding-3-small", input: Array.from({ length: 2049 }, () => "a") }, "input", /at most 2048/],
    [{ model: "openai/text-embedding-3-small", input: "x", encoding_format: "int8" }, "encoding_format", /Invalid 'encoding_format'/],
    [{ model: "auto", input: "x" }, "model", /named model/],
  ];
  for (const [body, param, message] of cases) {
    const answer = await post(body);
    t.is(answer.status, 400, JSON.stringify(body));
    t.is(answer.body.error.param, param, JSON.stringify(body));
    t.regex(answer.body.error.message, message, JSON.stringify(body));
  }
  t.is(openai.requests.length + backup.requests.length + gemini.requests.length, 0);
  t.is(embeddingRows().length, rows);
});

test.serial("an upstream's error answer passes through with its status, the upstream key redacted", async (t) => {
  openai.enqueue({
    status: 400,
    errorBody: { error: { message: `This key ${OPENAI_KEY} may not set dimensions.`, type: "invalid_request_error", param: null, code: null } },
  });
  const failed = await post({ model: "openai/text-embedding-3-small", input: "x" });
  t.is(failed.status, 400);
  t.regex(failed.body.error.message, /may not set dimensions/);
  t.false(failed.text.includes(OPENAI_KEY));
  t.is(backup.requests.length, 0, "an answer about the request is not retried elsewhere");
});

test.serial("Gemini: one text through embedContent, converted both ways, floats and the SDK's base64", async (t) => {
  const text = "word ".repeat(400).trim();
  const rows = embeddingRows().length;
  const floats = await client().embeddings.create({ model: "gemini/gemini-embedding-001", input: text, encoding_format: "float", dimensions: 768 });
  t.is(gemini.requests.length, 1);
  t.is(gemini.requests[0]!.path, "/v1beta/models/gemini-embedding-001:embedContent");
  t.deepEqual(gemini.requests[0]!.body, { content: { parts: [{ text }] }, outputDimensionality: 768 });
  t.is(gemini.requests[0]!.headers["x-goog-api-key"], GEMINI_KEY);
  t.is(floats.model, "gemini/gemini-embedding-001");
  t.deepEqual(floats.data[0]!.embedding, fakeEmbedding(text, 768));
  // Gemini reports no tokens: 1999 ASCII characters are estimated at 500, at $0.15 per million 75 credits.
  t.deepEqual(floats.usage, { prompt_tokens: 500, total_tokens: 500, gw_credits: 75 } as typeof floats.usage);
  t.like(embeddingRows().slice(rows)[0], { provider: "gemini", units: { input_tokens: 500 }, credits: 75 });

  // The SDK asks for base64 by default: the gateway encodes Gemini's floats, the SDK decodes them.
  const decoded = await client().embeddings.create({ model: "gemini/gemini-embedding-001", input: "hello gemini" });
  t.deepEqual(decoded.data[0]!.embedding, fakeEmbedding("hello gemini", 3072));
});

test.serial("Gemini: several texts through batchEmbedContents, 100 a call, in order", async (t) => {
  const texts = Array.from({ length: 150 }, (_, index) => `text number ${index}`);
  const answer = await client().embeddings.create({ model: "gemini/text-embedding-004", input: texts, encoding_format: "float" });
  t.deepEqual(
    gemini.requests.map((request) => [request.path, request.body.requests.length]),
    [
      ["/v1beta/models/text-embedding-004:batchEmbedContents", 100],
      ["/v1beta/models/text-embedding-004:batchEmbedContents", 50],
    ],
  );
  t.deepEqual(gemini.requests[1]!.body.requests[0], { model: "models/text-embedding-004", content: { parts: [{ text: "text number 100" }] } });
  t.deepEqual(
    answer.data.map((item) => item.index),
    texts.map((_, index) => index),
  );
  t.deepEqual(answer.data[149]!.embedding, fakeEmbedding("text number 149", 768));
  // text-embedding-004 is free on the Gemini API.
  t.like(embeddingRows().at(-1), { model: "gemini/text-embedding-004", credits: 0 });
});

test.serial("Gemini: token ids are refused (it embeds text); its error answers come in the OpenAI envelope", async (t) => {
  const tokens = await post({ model: "gemini/gemini-embedding-001", input: [1, 2, 3] });
  t.is(tokens.status, 400);
  t.is(tokens.body.error.param, "input");
  t.regex(tokens.body.error.message, /Gemini embeds text/);
  t.is(gemini.requests.length, 0);

  const tooLong = await post({ model: "gemini/text-embedding-004", input: "x", dimensions: 4096 });
  t.is(tooLong.status, 400);
  t.is(tooLong.body.error.type, "invalid_request_error");
  t.regex(tooLong.body.error.message, /output_dimensionality: must be between 1 and 768/);
  t.false(tooLong.text.includes(GEMINI_KEY));
});
