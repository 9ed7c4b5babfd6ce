// Hostile JSON nesting: JSON.parse takes any depth, but whatever reads the value next (zod, the
// converters, JSON.stringify on the way upstream) recurses. A ~20 KB body holding a 10,000-deep
// array must be refused by every JSON endpoint with a 400 in that endpoint's error dialect, before
// anything else reads it: no upstream call, no picture download, no 500 and no error logged. The
// limit (MAX_JSON_DEPTH in src/server/read-json-body.ts, 64) is exact: 64 levels pass, 65 do not.
// JSON text inside a string (tool-call arguments, tool results), which the vendor converters
// parse, may not nest deeper either. And the 413 of the presign endpoint names its real 64 KB limit.
import test, { type ExecutionContext } from "ava";
import { type FakeAnthropic, startFakeAnthropic } from "../fakes/anthropic.js";
import { fakeAudio } from "../fakes/audio-files.js";
import { type FakeBrave, startFakeBrave } from "../fakes/brave.js";
import { type FakeDeepgram, startFakeDeepgram } from "../fakes/deepgram.js";
import { type FakeGemini, startFakeGemini } from "../fakes/gemini.js";
import { pngFile } from "../fakes/image-files.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "../fakes/openai-images.js";
import { type FakeStability, startFakeStability } from "../fakes/stability.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "../helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "../helpers/picture-hosts.js";

const MAX_JSON_DEPTH = 64;
const HOSTILE_DEPTH = 10_000;
const NESTED_TOO_DEEP = new RegExp(`nested more than ${MAX_JSON_DEPTH} levels deep`);

let gateway: TestGateway;
let key: string;
/** Every upstream the refused requests would have reached; none may hear from gw. */
let chat: FakeOpenAI;
let anthropic: FakeAnthropic;
let images: FakeOpenAIImages;
let stability: FakeStability;
let hosts: PictureHosts;
let brave: FakeBrave;
let deepgram: FakeDeepgram;
/** The upstream of the boundary test only (route `edge/`): it does get called. */
let edge: FakeOpenAI;
/** The upstream of the JSON-inside-a-string test only (route `google/`). */
let gemini: FakeGemini;

test.before(async () => {
  [chat, anthropic, images, stability, hosts, edge, gemini, brave, deepgram] = await Promise.all([
    startFakeOpenAI(),
    startFakeAnthropic(),
    startFakeOpenAIImages(),
    startFakeStability(),
    startPictureHosts(),
    startFakeOpenAI(),
    startFakeGemini(),
    startFakeBrave(),
    startFakeDeepgram(),
  ]);
  const home = await makeHome((config) => {
    config.providers = {
      local: { type: "local" },
      oai: { type: "openai", baseUrl: chat.url, apiKey: "sk-upstream", upstream: { retries: 0 } },
      claude: { type: "anthropic", baseUrl: anthropic.url, apiKey: "sk-ant-upstream", upstream: { retries: 0 } },
      openai: { type: "openai", baseUrl: images.url, apiKey: "sk-images", upstream: { retries: 0 } },
      stability: { type: "stability", baseUrl: stability.url, apiKey: "sk-stability", upstream: { retries: 0 } },
      edge: { type: "openai", baseUrl: edge.url, apiKey: "sk-edge", upstream: { retries: 0 } },
      google: { type: "gemini", baseUrl: gemini.url, apiKey: "AIza-upstream", upstream: { retries: 0 } },
      brave: { type: "brave", baseUrl: brave.url, apiKey: "brave-upstream", upstream: { retries: 0 } },
      deepgram: { type: "deepgram", baseUrl: deepgram.url, apiKey: "dg-upstream", upstream: { retries: 0 } },
    };
    config.routes = [
      { prefix: "oai/", provider: "oai", priority: 10 },
      { prefix: "claude/", provider: "claude", priority: 10 },
      { prefix: "edge/", provider: "edge", priority: 10 },
      { prefix: "google/", provider: "google", priority: 10 },
    ];
    const pricing = { input_per_mtok: 1, output_per_mtok: 2 };
    config.models = [
      { id: "oai/gpt-test", name: "GPT Test", context_length: 100000, pricing },
      { id: "claude/claude-sonnet-4-5", name: "Claude", context_length: 200000, pricing },
      { id: "edge/gpt-test", name: "GPT Edge", context_length: 100000, pricing },
      { id: "google/gemini-2.5-flash", name: "Gemini", context_length: 100000, pricing },
    ];
    config.tools.image = { default: "openai/gpt-image-1", allow: [] };
    config.tools.describe = { default: "oai/gpt-test", allow: [] };
    config.tools.ocr = { default: "local/tesseract", allow: [] };
    config.tools.upscale = { default: "stability/fast-upscale", allow: [] };
    config.tools.background = { default: "stability/remove-background", allow: [] };
    config.tools.speech = { default: "local/espeak", allow: [] };
    config.tools.transcription = { default: "deepgram/nova-3", allow: [] };
    config.tools.search = { default: "brave/web", allow: [] };
    config.tools.video = { default: "local/kenburns", allow: [] };
    config.plans = { ...config.plans, pro: { ...(config.plans?.pro ?? {}), requestsPerMinute: 100_000 } };
  });
  // A real picture, so each request is otherwise one the endpoint serves.
  hosts.serve("/fox.png", pngFile(64, 64), "image/png");
  hosts.serve("/clip.wav", await fakeAudio({ codec: "wav", durationSeconds: 1 }), "audio/wav");
  key = await addKey(home, "deep-agent", "pro");
  gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
});

test.after.always(async () => {
  await gateway?.shutdown();
  await Promise.all([
    chat?.close(),
    anthropic?.close(),
    images?.close(),
    stability?.close(),
    hosts?.close(),
    edge?.close(),
    gemini?.close(),
    brave?.close(),
    deepgram?.close(),
  ]);
});

/** Stands in the request templates for the nested array; replaced in the body text. */
const NESTED = "\u0000nested\u0000";

/** `depth` arrays, one inside the other: `[[[...]]]`, 2 bytes a level. */
function nestedArray(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

/** The template as JSON text with NESTED replaced by `depth` nested arrays. */
function bodyWith(template: unknown, depth: number): string {
  const text = JSON.stringify(template);
  const marker = JSON.stringify(NESTED);
  if (text.split(marker).length !== 2) throw new Error("a template holds NESTED exactly once");
  return text.replace(marker, nestedArray(depth));
}

/** How deep the JSON text nests (objects and arrays), counted independently of the gateway. */
function nestingOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === "\\") index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "[" || char === "{") deepest = Math.max(deepest, ++depth);
    else if (char === "]" || char === "}") depth -= 1;
  }
  return deepest;
}

type Dialect = "gateway" | "messages" | "storage";

interface Endpoint {
  path: string;
  dialect: Dialect;
  /** A request the endpoint would otherwise take, with NESTED in one field. */
  template: unknown;
  headers?: Record<string, string>;
}

const picture = () => `${hosts.publicBase}/fox.png`;
const clip = () => `${hosts.publicBase}/clip.wav`;

// The nested array sits where a client would put structure: a content block, a metadata field,
// the MCP tool arguments. Each request is otherwise one the endpoint accepts (before the change,
// chat and messages answered 500 and every other endpoint served it, upstream calls included).
const ENDPOINTS: Endpoint[] = [
  {
    path: "/v1/chat/completions",
    dialect: "gateway",
    template: {
      model: "oai/gpt-test",
      max_tokens: 16,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "hello" },
            { type: "text", text: "again", extra: NESTED },
          ],
        },
      ],
    },
  },
  {
    path: "/anthropic/v1/messages",
    dialect: "messages",
    template: { model: "claude/claude-sonnet-4-5", max_tokens: 16, messages: [{ role: "user", content: [{ type: "text", text: "hello", extra: NESTED }] }] },
    headers: { "anthropic-version": "2023-06-01" },
  },
  { path: "/v1/image/generations", dialect: "gateway", template: { prompt: "a red fox", metadata: NESTED } },
  { path: "/v1/images/generations", dialect: "gateway", template: { prompt: "a red fox", model: "gpt-image-1", metadata: NESTED } },
  { path: "/v1/image/edits", dialect: "gateway", template: { prompt: "make it blue", images: [{ url: "PICTURE" }], metadata: NESTED } },
  { path: "/v1/images/edits", dialect: "gateway", template: { prompt: "make it blue", model: "gpt-image-1", images: ["PICTURE"], metadata: NESTED } },
  { path: "/v1/image/upscale", dialect: "gateway", template: { image: "PICTURE", metadata: NESTED } },
  { path: "/v1/image/background-removal", dialect: "gateway", template: { image: "PICTURE", metadata: NESTED } },
  { path: "/v1/image/describe", dialect: "gateway", template: { mediaUrl: "PICTURE", prompt: "what is this?", metadata: NESTED } },
  { path: "/v1/vision/describe", dialect: "gateway", template: { mediaUrl: "PICTURE", prompt: "what is this?", metadata: NESTED } },
  { path: "/v1/vision/ocr", dialect: "gateway", template: { mediaUrl: "PICTURE", metadata: NESTED } },
  { path: "/v1/projects", dialect: "gateway", template: { name: "deeply nested", metadata: NESTED } },
  { path: "/v1/audio/speech", dialect: "gateway", template: { input: "hello there", voice: "en-us", metadata: NESTED } },
  { path: "/v1/audio/synthesize", dialect: "gateway", template: { input: "hello there", voice: "en-us", metadata: NESTED } },
  { path: "/v1/audio/transcriptions", dialect: "gateway", template: { mediaUrl: "CLIP", response_format: "json", metadata: NESTED } },
  { path: "/v1/embeddings", dialect: "gateway", template: { model: "oai/text-embedding-3-small", input: ["hello", "again"], metadata: NESTED } },
  { path: "/v1/search", dialect: "gateway", template: { query: "red foxes", max_results: 3, metadata: NESTED } },
  { path: "/v1/video/generations", dialect: "gateway", template: { prompt: "a slow pan", image_url: "PICTURE", duration_seconds: 1, metadata: NESTED } },
  { path: "/v1/storage/presigned-upload", dialect: "storage", template: { filename: "notes.txt", contentType: "text/plain", sizeBytes: 5, metadata: NESTED } },
  {
    path: "/mcp",
    dialect: "gateway",
    template: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "image_generate", arguments: { prompt: "a red fox", style: NESTED } } },
    headers: { accept: "application/json, text/event-stream" },
  },
];

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

async function post(path: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "x-api-key": key, "content-type": "application/json", ...headers },
    body,
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

/** The nesting refusal, in the endpoint's dialect. */
function assertNestingRefusal(t: ExecutionContext, answer: Answer, dialect: Dialect): void {
  t.is(answer.status, 400, answer.text.slice(0, 500));
  t.truthy(answer.headers.get("x-request-id"), "X-Request-Id is set");
  t.regex(answer.headers.get("content-type") ?? "", /^application\/json/);
  let message: unknown;
  if (dialect === "gateway") {
    t.deepEqual(Object.keys(answer.body ?? {}), ["error"], answer.text.slice(0, 500));
    t.like(answer.body?.error, { type: "invalid_request_error", code: "invalid_json" });
    message = answer.body?.error?.message;
  } else if (dialect === "messages") {
    t.deepEqual(Object.keys(answer.body ?? {}).sort(), ["error", "type"], answer.text.slice(0, 500));
    t.is(answer.body?.type, "error");
    t.deepEqual(Object.keys(answer.body?.error ?? {}).sort(), ["message", "type"]);
    t.is(answer.body?.error?.type, "invalid_request_error");
    message = answer.body?.error?.message;
  } else {
    t.deepEqual(Object.keys(answer.body ?? {}), ["message"], answer.text.slice(0, 500));
    message = answer.body?.message;
  }
  t.is(typeof message, "string");
  t.regex(String(message), NESTED_TOO_DEEP);
}

const errorLines = () => quietLogger.lines.filter((line) => line.startsWith("error"));

for (const endpoint of ENDPOINTS) {
  test(`POST ${endpoint.path}: a 20 KB body nested ${HOSTILE_DEPTH} deep is a 400 in the endpoint's dialect, before anything reads it`, async (t) => {
    const template = JSON.parse(
      JSON.stringify(endpoint.template).replaceAll('"PICTURE"', JSON.stringify(picture())).replaceAll('"CLIP"', JSON.stringify(clip())),
    );
    const body = bodyWith(template, HOSTILE_DEPTH);
    t.true(body.length > 20_000 && body.length < 21_000, `${body.length} bytes`);
    t.true(nestingOf(body) > HOSTILE_DEPTH);
    const errorsBefore = errorLines().length;

    const answer = await post(endpoint.path, body, endpoint.headers);

    assertNestingRefusal(t, answer, endpoint.dialect);
    // Nothing in this gateway may reach an upstream (the boundary test has its own): not a chat
    // or messages call, not an image call, not a picture download.
    t.deepEqual(chat.requests, [], "chat upstream");
    t.deepEqual(anthropic.requests, [], "anthropic upstream");
    t.deepEqual(images.requests, [], "images upstream");
    t.deepEqual(stability.requests, [], "stability upstream");
    t.deepEqual(brave.requests, [], "search upstream");
    t.deepEqual(deepgram.requests, [], "transcription upstream");
    t.deepEqual(hosts.publicHits, [], "picture host");
    t.deepEqual(hosts.internal.requests, [], "internal trap");
    t.deepEqual(errorLines().slice(errorsBefore), [], "no error logged");
  });
}

test("POST /v1/projects: the refused body created no project", async (t) => {
  const body = bodyWith({ name: "refused project", metadata: NESTED }, HOSTILE_DEPTH);
  assertNestingRefusal(t, await post("/v1/projects", body), "gateway");
  const listed = await fetch(`${gateway.url}/v1/projects`, { headers: { authorization: `Bearer ${key}` } });
  t.is(listed.status, 200);
  const names = ((await listed.json()) as { data: Array<{ name: string }> }).data.map((project) => project.name);
  t.false(names.includes("refused project"), names.join(", "));
});

test(`the limit is ${MAX_JSON_DEPTH} levels: a chat body nested exactly ${MAX_JSON_DEPTH} deep is served, one level more is refused`, async (t) => {
  // The body object is level 1, the `tools` array level 2 ... so the nested arrays add depth - 5.
  const request = (depth: number) =>
    bodyWith(
      {
        model: "edge/gpt-test",
        max_tokens: 16,
        messages: [{ role: "user", content: "hello" }],
        tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", examples: NESTED } } }],
      },
      depth - 5,
    );
  t.is(nestingOf(request(MAX_JSON_DEPTH)), MAX_JSON_DEPTH);
  t.is(nestingOf(request(MAX_JSON_DEPTH + 1)), MAX_JSON_DEPTH + 1);
  const errorsBefore = errorLines().length;

  const atLimit = await post("/v1/chat/completions", request(MAX_JSON_DEPTH));
  t.false(atLimit.status === 400 && NESTED_TOO_DEEP.test(atLimit.text), `refused at the limit: ${atLimit.text.slice(0, 300)}`);
  t.is(atLimit.status, 200, atLimit.text.slice(0, 300));
  t.is(edge.requests.length, 1, "the request went upstream");

  const overLimit = await post("/v1/chat/completions", request(MAX_JSON_DEPTH + 1));
  assertNestingRefusal(t, overLimit, "gateway");
  t.is(edge.requests.length, 1, "the refused request did not");
  t.deepEqual(errorLines().slice(errorsBefore), [], "no error logged");
});

// The body's check cannot see into strings: tool-call arguments and tool results are JSON text the
// Anthropic and Gemini converters parse and put into the vendor body, which is then serialised.
// The body below nests 6 levels; the string inside it, 10,001. Serial: these share the gemini fake.
const nestedText = () => `{"a":${nestedArray(HOSTILE_DEPTH)}}`;
const toolConversation = (model: string, text: { arguments: string; result: string }) =>
  JSON.stringify({
    model,
    max_tokens: 16,
    messages: [
      { role: "user", content: "look it up" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: text.arguments } }] },
      { role: "tool", tool_call_id: "call_1", content: text.result },
    ],
    tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
  });

for (const [vendor, model] of [
  ["anthropic", "claude/claude-sonnet-4-5"],
  ["gemini", "google/gemini-2.5-flash"],
] as const) {
  test.serial(`chat to ${vendor}: tool-call arguments holding JSON nested ${HOSTILE_DEPTH} deep are a 400 naming them, not a 500`, async (t) => {
    const errorsBefore = errorLines().length;
    const answer = await post("/v1/chat/completions", toolConversation(model, { arguments: nestedText(), result: "{}" }));
    t.is(answer.status, 400, answer.text.slice(0, 500));
    t.truthy(answer.headers.get("x-request-id"));
    t.like(answer.body?.error, { type: "invalid_request_error", code: "invalid_parameter", param: "messages[1].tool_calls[0].function.arguments" });
    t.regex(String(answer.body?.error?.message), NESTED_TOO_DEEP);
    t.deepEqual(anthropic.requests, [], "anthropic upstream");
    t.deepEqual(gemini.requests, [], "gemini upstream");
    t.deepEqual(errorLines().slice(errorsBefore), [], "no error logged");
  });
}

test.serial("chat to gemini: a tool result holding JSON nested 10000 deep goes as text, not as a structure to re-serialise", async (t) => {
  const errorsBefore = errorLines().length;
  // Serial, so after the refusal tests above found gemini's request list empty (ava runs serial tests first, in order).
  const answer = await post("/v1/chat/completions", toolConversation("google/gemini-2.5-flash", { arguments: "{}", result: nestedText() }));
  t.is(answer.status, 200, answer.text.slice(0, 500));
  const sent = gemini.requests.map((request) => JSON.stringify(request.body)).find((body) => body.includes("functionResponse"));
  t.truthy(sent, "the call went upstream");
  const contents = JSON.parse(sent!).contents as Array<{ parts: Array<{ functionResponse?: { response: unknown } }> }>;
  const response = contents.flatMap((content) => content.parts).find((part) => part.functionResponse)!.functionResponse!.response;
  t.deepEqual(response, { result: nestedText() });
  t.deepEqual(errorLines().slice(errorsBefore), [], "no error logged");
});

test("POST /v1/storage/presigned-upload over 64 KB is a 413 {message} naming the 64 KB limit", async (t) => {
  const body = JSON.stringify({ filename: "notes.txt", contentType: "text/plain", sizeBytes: 5, padding: "x".repeat(70 * 1024) });
  const answer = await post("/v1/storage/presigned-upload", body);
  t.is(answer.status, 413, answer.text);
  t.truthy(answer.headers.get("x-request-id"));
  t.deepEqual(Object.keys(answer.body ?? {}), ["message"], answer.text);
  t.regex(answer.body.message, /\b64 KB\b/);
  t.notRegex(answer.body.message, /\b0 MB\b/);
});
