// Hostile upstreams, through the official clients against a real gw: an upstream that echoes the
// key gw sent it must not hand that key to gw's caller or its log; a malformed 200 is the
// upstream's fault (502, retried, next route), never gw's 500; bad SSE lines read together with
// good ones are skipped without losing the good ones or the usage; and request fields that other
// gateways act on (where to send the call, with which key) never leave gw. The error's
// Content-Type is upstream text too: kept only as a plain media type, and redacted.

import http from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import test, { type ExecutionContext } from "ava";
import OpenAI from "openai";
import { homePaths } from "../../src/config/paths.js";
import { periodOf, UsageLog } from "../../src/store/usage-log.js";
import { type FakeAnthropic, startFakeAnthropic } from "../fakes/anthropic.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "../helpers/gateway-harness.js";

const SECRETS = {
  compatKey: "sk-live-ABCDEF1234567890",
  claudeKey: "sk-ant-live-ABCDEF1234567890",
  orgHeader: "org-secret-0987654321",
  /** Echoed by an upstream that escapes `/` in JSON strings (`sk-a\/b\/...`). */
  slashKey: "sk-a/b/LIVE-1234567890",
  /** The key of the upstream that echoes it into its error's Content-Type. */
  mirrorKey: "sk-mirror-LIVE-1234567890",
};
const RETRIES = 2;

let compat: FakeOpenAI;
let slashy: FakeOpenAI;
let backup: FakeOpenAI;
let claude: FakeAnthropic;
let mirror: http.Server;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  [compat, slashy, backup, claude] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI(), startFakeAnthropic()]);
  mirror = http.createServer(mirrorContentType);
  await new Promise<void>((resolve) => mirror.listen(0, "127.0.0.1", resolve));
  const mirrorUrl = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}/v1`;
  const home = await makeHome((config) => {
    config.upstream = { retries: RETRIES, retryBaseDelayMs: 1, breakerFailureThreshold: 0 };
    const headers = { "x-org-secret": SECRETS.orgHeader };
    config.providers = {
      compat: { type: "openai", baseUrl: compat.url, apiKey: SECRETS.compatKey, headers },
      claude: { type: "anthropic", baseUrl: claude.url, apiKey: SECRETS.claudeKey, headers },
      slashy: { type: "openai", baseUrl: slashy.url, apiKey: SECRETS.slashKey },
      backup: { type: "openai", baseUrl: backup.url, apiKey: "sk-backup-not-secret" },
      mirror: { type: "openai", baseUrl: mirrorUrl, apiKey: SECRETS.mirrorKey },
    };
    config.routes = [
      { prefix: "compat/", provider: "compat", priority: 10 },
      { prefix: "claude/", provider: "claude", priority: 10 },
      { prefix: "slashy/", provider: "slashy", priority: 10 },
      { prefix: "mirror/", provider: "mirror", priority: 10 },
      { prefix: "fallback/", provider: "compat", priority: 10 },
      { prefix: "fallback/", provider: "backup", priority: 5 },
    ];
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "boundary", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await Promise.all([compat?.close(), slashy?.close(), backup?.close(), claude?.close()]);
  mirror?.close();
});

/**
 * An upstream that answers every chat call with a 400 (OpenAI's envelope, no secret in it) whose
 * Content-Type is chosen by the model asked for, some of them carrying the Authorization it got.
 */
function mirrorContentType(request: http.IncomingMessage, response: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const authorization = request.headers.authorization ?? "";
    const model = String((JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model?: unknown }).model)
      .split("/")
      .at(-1);
    const contentTypes: Record<string, string> = {
      quoted: `application/json; charset=utf-8; auth="${authorization}"`,
      token: `application/json; key=${authorization.replace(/^Bearer /, "")}`,
      header: authorization,
      long: `application/json; pad="${"x".repeat(300)}"`,
      plain: "application/problem+json; charset=utf-8",
    };
    response.writeHead(400, { "content-type": contentTypes[model ?? ""] ?? "application/json" });
    response.end(JSON.stringify(openAIError("The header was refused.")));
  });
}

test.beforeEach(() => {
  for (const fake of [compat, slashy, backup, claude]) fake.reset();
});

const openai = () => new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
const anthropic = () => new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: key, maxRetries: 0 });
const ping = [{ role: "user" as const, content: "ping" }];

/** Raw POSTs, for exact bodies and for fields the SDK types refuse. */
async function post(path: string, body: object, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}
const postChat = (body: object) => post("/v1/chat/completions", body, { authorization: `Bearer ${key}` });
const postMessages = (body: object) => post("/anthropic/v1/messages", body, { "x-api-key": key, "anthropic-version": "2023-06-01" });

/** The secrets in a text, as written or once its JSON escapes are read (`\/` is `/`). */
function leakedSecrets(text: string): string[] {
  const unescaped = text.replaceAll("\\/", "/");
  return Object.values(SECRETS).filter((secret) => text.includes(secret) || unescaped.includes(secret));
}

function assertRedacted(t: ExecutionContext, text: string, what: string): void {
  t.deepEqual(leakedSecrets(text), [], `${what} leaks a secret: ${text}`);
  t.true(text.includes("[REDACTED]"), `${what} shows where the secret was: ${text}`);
}

function assertLogClean(t: ExecutionContext): void {
  t.deepEqual(leakedSecrets(quietLogger.lines.join("\n")), [], "the log holds a secret");
}

const echoed = `Invalid header value: Bearer ${SECRETS.compatKey} (x-org-secret: ${SECRETS.orgHeader})`;
const openAIError = (message: string) => ({ error: { message, type: "invalid_request_error", param: null, code: "invalid_header" } });
const anthropicError = (message: string) => ({ type: "error", error: { type: "invalid_request_error", message }, request_id: "req_echo" });
/** JSON as PHP and some proxies write it: every `/` escaped. */
const slashEscapedJson = (value: unknown) => JSON.stringify(value).replaceAll("/", "\\/");

/** A chat.completion.chunk as JSON text. */
function chunk(delta: object, extra: object = {}): string {
  return JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-x",
    choices: [{ index: 0, delta, finish_reason: null }],
    ...extra,
  });
}
const usageChunk = (prompt: number, completion: number) =>
  JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-x",
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  });

/** The content deltas an OpenAI SDK stream delivered, and its usage. */
async function streamedChat(model: string): Promise<{ contents: string[]; usage: OpenAI.CompletionUsage | undefined }> {
  const stream = await openai().chat.completions.create({ model, messages: ping, stream: true, stream_options: { include_usage: true } });
  const contents: string[] = [];
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const part of stream) {
    const content = part.choices[0]?.delta.content;
    if (content) contents.push(content);
    if (part.usage) usage = part.usage;
  }
  return { contents, usage };
}

// ---- 1. Upstream keys never reach the client or the log ----

test.serial("chat completions: a 400 echoing the key and the secret header comes back redacted; a 5xx's 502 omits it", async (t) => {
  compat.set({ status: 400, errorBody: openAIError(echoed) });
  const error = await t.throwsAsync(openai().chat.completions.create({ model: "compat/gpt-x", messages: ping }), { instanceOf: OpenAI.BadRequestError });
  assertRedacted(t, error!.message, "the SDK's error");
  const raw = await postChat({ model: "compat/gpt-x", messages: ping });
  t.is(raw.status, 400);
  assertRedacted(t, raw.text, "the body");
  t.is(JSON.parse(raw.text).error.code, "invalid_header", "the upstream's error is passed through otherwise");
  // The same echo in a 5xx until the retries run out: the 502 lists the attempts, not the key.
  compat.reset();
  compat.set({ status: 500, errorBody: openAIError(echoed) });
  const exhausted = await t.throwsAsync(openai().chat.completions.create({ model: "compat/gpt-x", messages: ping }), { instanceOf: OpenAI.APIError });
  t.is(exhausted!.status, 502);
  t.regex(exhausted!.message, /Attempts: compat: HTTP 500/);
  t.deepEqual(leakedSecrets(exhausted!.message), []);
  t.is(compat.requests.length, RETRIES + 1);
  assertLogClean(t);
});

test.serial("chat completions: a key with `/` echoed JSON-escaped (`\\/`) is redacted too", async (t) => {
  slashy.set({ status: 400, errorBody: slashEscapedJson(openAIError(`Invalid header value: Bearer ${SECRETS.slashKey}`)) });
  const error = await t.throwsAsync(openai().chat.completions.create({ model: "slashy/gpt-x", messages: ping }), { instanceOf: OpenAI.BadRequestError });
  assertRedacted(t, error!.message, "the SDK's error");
  const raw = await postChat({ model: "slashy/gpt-x", messages: ping });
  t.is(raw.status, 400);
  assertRedacted(t, raw.text, "the body");
  assertLogClean(t);
});

test.serial("messages, native: Anthropic's 400 echoing the key comes back redacted", async (t) => {
  claude.set({ status: 400, errorBody: anthropicError(`invalid x-api-key: ${SECRETS.claudeKey} (x-org-secret: ${SECRETS.orgHeader})`) });
  const request = { model: "claude/claude-sonnet-4-5", max_tokens: 50, messages: ping };
  const error = await t.throwsAsync(anthropic().messages.create(request), { instanceOf: Anthropic.BadRequestError });
  assertRedacted(t, error!.message, "the SDK's error");
  const raw = await postMessages(request);
  t.is(raw.status, 400);
  assertRedacted(t, raw.text, "the body");
  t.is(JSON.parse(raw.text).request_id, "req_echo", "Anthropic's own body is passed through otherwise");
  assertLogClean(t);
});

test.serial("messages, converted: an OpenAI-compatible 400 echoing the key comes back redacted", async (t) => {
  compat.set({ status: 400, errorBody: openAIError(echoed) });
  const request = { model: "compat/gpt-x", max_tokens: 50, messages: ping };
  const error = await t.throwsAsync(anthropic().messages.create(request), { instanceOf: Anthropic.BadRequestError });
  assertRedacted(t, error!.message, "the SDK's error");
  const raw = await postMessages(request);
  t.is(raw.status, 400);
  assertRedacted(t, raw.text, "the body");
  assertLogClean(t);
});

test.serial("messages, native stream: an `error` event echoing the key reaches the client redacted", async (t) => {
  claude.set({ content: "one two", streamError: { type: "invalid_request_error", message: `Bearer ${SECRETS.claudeKey} refused`, afterChunks: 1 } });
  const request = { model: "claude/claude-sonnet-4-5", max_tokens: 50, messages: ping, stream: true };
  const error = await t.throwsAsync(anthropic().messages.stream(request).finalMessage());
  assertRedacted(t, error!.message, "the SDK's error");
  const raw = await postMessages(request);
  t.is(raw.status, 200);
  t.true(raw.text.includes("event: error"), raw.text);
  assertRedacted(t, raw.text, "the stream");
  assertLogClean(t);
});

test.serial("chat stream: content and a bad line echoing the key reach neither the client nor the log", async (t) => {
  compat.set({
    rawEvents: [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: `your key is ${SECRETS.compatKey}` }),
      `Bearer ${SECRETS.compatKey}`,
      usageChunk(5, 5),
    ],
  });
  const compatStream = await streamedChat("compat/gpt-x");
  t.deepEqual(compatStream.contents, ["your key is [REDACTED]"]);
  // Escaped as `sk-a\/b\/...` inside the event's JSON.
  slashy.set({
    rawEvents: [chunk({ role: "assistant", content: "" }), slashEscapedJson(JSON.parse(chunk({ content: `key ${SECRETS.slashKey}` }))), usageChunk(5, 2)],
  });
  const slashStream = await streamedChat("slashy/gpt-x");
  t.deepEqual(slashStream.contents, ["key [REDACTED]"]);
  t.true(
    quietLogger.lines.some((line) => line.startsWith("warn compat: skipped") && line.includes("Bearer [REDACTED]")),
    "the skipped line is logged, redacted",
  );
  assertLogClean(t);
});

test.serial("chat completions: an error's Content-Type echoing the key is redacted, or application/json when it is no plain media type", async (t) => {
  const cases: Array<[model: string, contentType: string]> = [
    ["mirror/quoted", 'application/json; charset=utf-8; auth="Bearer [REDACTED]"'],
    // Redacted, `key=[REDACTED]` is no longer a token: not a media type gw passes on.
    ["mirror/token", "application/json"],
    ["mirror/header", "application/json"],
    ["mirror/long", "application/json"],
    ["mirror/plain", "application/problem+json; charset=utf-8"],
  ];
  for (const [model, contentType] of cases) {
    const response = await fetch(`${gateway.v1}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: ping }),
    });
    const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join("\n");
    t.is(response.status, 400, model);
    t.deepEqual(leakedSecrets(headers), [], `${model}: the headers leak a secret:\n${headers}`);
    t.is(response.headers.get("content-type"), contentType, model);
    t.is(((await response.json()) as { error: { message: string } }).error.message, "The header was refused.", `${model}: the body passes through`);
  }
  assertLogClean(t);
});

// ---- 2. A malformed 200 is the upstream's fault ----

/** A real completion carrying a field nested 5,000 deep: it parses, but cannot be written back out. */
const deepCompletion = JSON.stringify({
  id: "chatcmpl-deep",
  object: "chat.completion",
  created: 1,
  model: "gpt-x",
  choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
}).replace(/}$/, `,"extra":${"[".repeat(5000)}${"]".repeat(5000)}}`);

for (const rawBody of ["null", "123", "[]", '{"id":"x","object":"chat.completion"}', deepCompletion]) {
  test.serial(`a 200 whose body is ${rawBody.slice(0, 60)}: 502 naming the provider, after the retries`, async (t) => {
    compat.set({ rawBody });
    const error = await t.throwsAsync(openai().chat.completions.create({ model: "compat/gpt-x", messages: ping }), { instanceOf: OpenAI.APIError });
    t.is(error!.status, 502);
    const envelope = error!.error as { type: string; code: string; provider: string; message: string };
    t.like(envelope, { type: "upstream_error", code: "upstream_unavailable", provider: "compat" });
    t.regex(envelope.message, /compat: invalid response/);
    t.is(compat.requests.length, RETRIES + 1);
  });

  test.serial(`a 200 whose body is ${rawBody.slice(0, 60)}: the next route serves the request`, async (t) => {
    compat.set({ rawBody });
    const completion = await openai().chat.completions.create({ model: "fallback/gpt-x", messages: ping });
    t.is(completion.choices[0]!.message.content, "echo: ping");
    t.is(compat.requests.length, RETRIES + 1);
    t.is(backup.requests.length, 1);
  });
}

// ---- 3. Bad SSE lines in the same read as good ones ----

const rows = () => UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date()));
const warned = (text: string) => quietLogger.lines.some((line) => line.startsWith("warn ") && line.includes("skipped") && line.includes(text));

test.serial("chat stream: garbage and a truncated event among good ones are skipped; every good chunk and the usage arrive", async (t) => {
  const truncated = '{"id":"chatcmpl-1","choices":[';
  compat.set({
    rawEvents: [
      chunk({ role: "assistant", content: "" }),
      "garbage",
      truncated,
      chunk({ content: "Hello" }),
      chunk({ content: " there" }),
      chunk({ content: "!" }),
      usageChunk(9, 3),
    ],
  });
  const { contents, usage } = await streamedChat("compat/gpt-x");
  t.deepEqual(contents, ["Hello", " there", "!"]);
  t.like(usage, { prompt_tokens: 9, completion_tokens: 3 });
  t.like(rows().at(-1), { endpoint: "chat.completions", provider: "compat", units: { prompt_tokens: 9, completion_tokens: 3 } });
  t.true(warned(JSON.stringify("garbage")), quietLogger.lines.join("\n"));
  t.true(warned(JSON.stringify(truncated)), quietLogger.lines.join("\n"));
});

test.serial("messages, native stream: garbage and a truncated event among good ones are skipped; the text and usage arrive", async (t) => {
  const delta = (text: string) => ({
    event: "content_block_delta",
    data: JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }),
  });
  const truncated = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo';
  const message = {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 9, output_tokens: 1 },
  };
  claude.set({
    rawEvents: [
      { event: "message_start", data: JSON.stringify({ type: "message_start", message }) },
      { event: "content_block_start", data: JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) },
      { data: "garbage" },
      { event: "content_block_delta", data: truncated },
      delta("Hello"),
      delta(" there"),
      delta("!"),
      { event: "content_block_stop", data: JSON.stringify({ type: "content_block_stop", index: 0 }) },
      {
        event: "message_delta",
        data: JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 3 } }),
      },
      { event: "message_stop", data: JSON.stringify({ type: "message_stop" }) },
    ],
  });
  const stream = anthropic().messages.stream({ model: "claude/claude-sonnet-4-5", max_tokens: 50, messages: ping });
  const texts: string[] = [];
  stream.on("text", (text) => texts.push(text));
  const final = await stream.finalMessage();
  t.deepEqual(texts, ["Hello", " there", "!"]);
  t.like(final.usage, { input_tokens: 9, output_tokens: 3 });
  t.like(rows().at(-1), { endpoint: "messages", provider: "claude", units: { prompt_tokens: 9, completion_tokens: 3 } });
  t.true(warned(JSON.stringify("garbage")), quietLogger.lines.join("\n"));
  t.true(warned(JSON.stringify(truncated)), quietLogger.lines.join("\n"));
});

// ---- 4. Fields other gateways act on never leave gw ----

const CONTROL_FIELDS = {
  api_base: "http://attacker.example/v1",
  base_url: "http://attacker.example",
  api_key: "sk-attacker-0000000000",
  mock_response: "pwned",
  fallbacks: ["attacker/model"],
  user_config: { model_list: [{ model_name: "x", litellm_params: { api_base: "http://attacker.example" } }] },
};

function assertControlFieldsDropped(t: ExecutionContext, sent: Record<string, unknown>): void {
  t.deepEqual(
    Object.keys(CONTROL_FIELDS).filter((field) => field in sent),
    [],
    JSON.stringify(sent),
  );
  t.is(sent.temperature, 0.3, "ordinary fields still arrive");
}

for (const stream of [false, true]) {
  test.serial(`chat completions${stream ? " (stream)" : ""}: gateway-control fields are dropped, ordinary fields forwarded`, async (t) => {
    const response = await postChat({ model: "compat/gpt-x", messages: ping, stream, temperature: 0.3, metadata: { trace: "t-1" }, ...CONTROL_FIELDS });
    t.is(response.status, 200, response.text);
    const sent = compat.requests.at(-1)!.body;
    assertControlFieldsDropped(t, sent);
    t.deepEqual(sent.metadata, { trace: "t-1" });
  });
}

test.serial("messages, native and converted: gateway-control fields are dropped, ordinary fields forwarded", async (t) => {
  for (const { model, fake } of [
    { model: "claude/claude-sonnet-4-5", fake: claude },
    { model: "compat/gpt-x", fake: compat },
  ]) {
    const response = await postMessages({ model, max_tokens: 50, messages: ping, temperature: 0.3, metadata: { user_id: "u-1" }, ...CONTROL_FIELDS });
    t.is(response.status, 200, `${model}: ${response.text}`);
    assertControlFieldsDropped(t, fake.requests.at(-1)!.body);
  }
  // The converter drops metadata on purpose (no OpenAI equivalent); the native path keeps it.
  t.deepEqual(claude.requests.at(-1)!.body.metadata, { user_id: "u-1" });
});
