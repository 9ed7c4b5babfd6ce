// OpenTelemetry traces (docs/decisions.md §26): what a collector receives over OTLP/HTTP from a
// gw whose config names it. A receiver on loopback takes the exports: http/json ones are parsed,
// http/protobuf ones checked by content type and content. One span per request (SERVER) with the
// GenAI conventions' attributes, one child per upstream attempt (CLIENT) with its outcome; the
// caller's traceparent continued; never a key, and never a prompt unless the operator opted in.

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import test from "ava";
import OpenAI from "openai";
import { telemetryCheck } from "../src/cli/doctor-telemetry-check.js";
import { telemetrySchema } from "../src/config/config-schema.js";
import { startTracing } from "../src/server/telemetry/request-tracing.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, editHomeConfig, gwBin, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { tempDir } from "./helpers/temp-dirs.js";

// The batch processor's delay (OTEL_BSP_SCHEDULE_DELAY, read as each tracer starts): spans
// leave within 20 ms, so the tests wait for exports, not for the default 5 s.
process.env.OTEL_BSP_SCHEDULE_DELAY = "20";

const UPSTREAM_KEY = "sk-upstream-never-exported-1234";
const PROMPT = "a prompt that must never reach the collector";
const IMAGE_PROMPT = "a picture prompt that must never reach the collector";
const COLLECTOR_KEY = "collector-api-key-5678";

interface Export {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface OtlpReceiver {
  url: string;
  exports: Export[];
  close(): Promise<void>;
}

/** An OTLP/HTTP collector on loopback that keeps what it is sent and answers an empty success. */
async function startReceiver(status = 200): Promise<OtlpReceiver> {
  const exports: Export[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      exports.push({ path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks) });
      const json = request.headers["content-type"] === "application/json";
      response.writeHead(status, { "content-type": json ? "application/json" : "application/x-protobuf" });
      response.end(json ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** OTLP's JSON encoding of a span (ids in hex, attributes as typed values). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number; message?: string };
}

const SERVER = 2;
const CLIENT = 3;
const STATUS_ERROR = 2;

function spansOf(receiver: OtlpReceiver): OtlpSpan[] {
  return receiver.exports
    .filter((entry) => entry.headers["content-type"] === "application/json")
    .flatMap((entry) => {
      const body = JSON.parse(entry.body.toString("utf8")) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      return body.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
    });
}

/** A span's attributes as plain values. */
function attributesOf(span: OtlpSpan): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const { key, value } of span.attributes ?? []) {
    const [type, raw] = Object.entries(value)[0] ?? [];
    values[key] = type === "intValue" ? Number(raw) : raw;
  }
  return values;
}

interface RequestTrace {
  request: OtlpSpan;
  attributes: Record<string, unknown>;
  /** Its attempts' spans, in the order they began. */
  attempts: OtlpSpan[];
}

/** The exported span of a request (by its x-request-id) and its attempts' spans. */
async function traceOf(receiver: OtlpReceiver, requestId: string, attempts = 0): Promise<RequestTrace> {
  const found = await eventually(() => {
    const spans = spansOf(receiver);
    const request = spans.find((span) => attributesOf(span)["gw.request_id"] === requestId);
    if (!request) return undefined;
    const children = spans.filter((span) => span.parentSpanId === request.spanId);
    return children.length >= attempts ? { request, attributes: attributesOf(request), attempts: children } : undefined;
  }, `the spans of ${requestId}`);
  return found!;
}

let fake: FakeOpenAI;
let images: FakeOpenAIImages;
let receiver: OtlpReceiver;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  fake = await startFakeOpenAI();
  images = await startFakeOpenAIImages();
  receiver = await startReceiver();
  const home = await makeHome((config) => {
    config.upstream = { retries: 1, retryBaseDelayMs: 1, breakerFailureThreshold: 0 };
    config.providers = {
      up: { type: "openai", baseUrl: fake.url, apiKey: UPSTREAM_KEY },
      openai: { type: "openai", baseUrl: images.url, apiKey: UPSTREAM_KEY, upstream: { retries: 0 } },
    };
    config.routes = [{ prefix: "m/", provider: "up", priority: 1 }];
    config.models = [{ id: "m/x", name: "X", context_length: 8000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }];
    config.tools.image = { default: "openai/gpt-image-1", allow: [] };
    config.telemetry = { otlp: { endpoint: receiver.url, protocol: "http/json", headers: { "x-collector-key": COLLECTOR_KEY } } };
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "traced-agent", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
  await images?.close();
  await receiver?.close();
});

function client(headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0, defaultHeaders: headers });
}

test.serial("a chat call: one SERVER span with the GenAI attributes, the agent and key prefix, and one CLIENT attempt under it", async (t) => {
  fake.enqueue({ usage: { prompt_tokens: 7, completion_tokens: 3 } });
  const { response } = await client()
    .chat.completions.create({ model: "m/x", max_tokens: 10, messages: [{ role: "user", content: PROMPT }] })
    .withResponse();
  const { request, attributes, attempts } = await traceOf(receiver, response.headers.get("x-request-id")!, 1);
  t.is(request.kind, SERVER);
  t.is(request.name, "chat m/x");
  t.like(attributes, {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "m/x",
    "gen_ai.response.model": "m/x",
    "gen_ai.provider.name": "openai",
    "gen_ai.usage.input_tokens": 7,
    "gen_ai.usage.output_tokens": 3,
    "gw.credits": 10,
    "gw.attempts": 1,
    "gw.provider": "up",
    "gw.agent": "traced-agent",
    "gw.key_prefix": key.slice(0, 11),
    "http.request.method": "POST",
    "http.route": "/v1/chat/completions",
    "http.response.status_code": 200,
  });
  t.not(request.status?.code, STATUS_ERROR);
  t.is(attempts.length, 1);
  const [attempt] = attempts;
  t.is(attempt!.kind, CLIENT);
  t.is(attempt!.traceId, request.traceId);
  t.is(attempt!.name, "chat x");
  t.like(attributesOf(attempt!), {
    "gen_ai.request.model": "x",
    "gen_ai.provider.name": "openai",
    "gw.provider": "up",
    "gw.attempt.outcome": "ok",
    "server.address": "127.0.0.1",
    "server.port": fake.port,
  });
  const sent = receiver.exports.find((entry) => entry.body.includes(response.headers.get("x-request-id")!))!;
  t.is(sent.path, "/v1/traces");
  t.is(sent.headers["x-collector-key"], COLLECTOR_KEY, "the configured headers go with each export");
});

test.serial("a streamed call: its span ends with the stream, with the stream's usage", async (t) => {
  const { data: stream, response } = await client()
    .chat.completions.create({ model: "m/x", stream: true, max_tokens: 10, messages: [{ role: "user", content: PROMPT }] })
    .withResponse();
  for await (const _chunk of stream) void _chunk;
  const { request, attributes, attempts } = await traceOf(receiver, response.headers.get("x-request-id")!, 1);
  t.is(request.name, "chat m/x");
  t.like(attributes, { "gen_ai.request.stream": true, "http.response.status_code": 200, "gw.attempts": 1 });
  t.true((attributes["gen_ai.usage.output_tokens"] as number) > 0);
  t.true((attributes["gw.credits"] as number) > 0);
  t.not(request.status?.code, STATUS_ERROR);
  t.like(attributesOf(attempts[0]!), { "gw.attempt.outcome": "ok" });
});

test.serial("a stream that breaks after its first byte: its 200 span has an error status", async (t) => {
  fake.enqueue({ dropAfterChunks: 1 });
  const response = await fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m/x", stream: true, max_tokens: 10, messages: [{ role: "user", content: PROMPT }] }),
  });
  t.is(response.status, 200);
  t.regex(await response.text(), /stream_interrupted/);
  const { request, attributes } = await traceOf(receiver, response.headers.get("x-request-id")!);
  t.is(request.status?.code, STATUS_ERROR);
  t.like(attributes, { "http.response.status_code": 200, "error.type": "stream_broken" });
});

test.serial("a retried call: two attempt spans, the first failed with the upstream's 500, the second ok", async (t) => {
  fake.enqueue({ status: 500 }, { usage: { prompt_tokens: 5, completion_tokens: 2 } });
  const { response } = await client()
    .chat.completions.create({ model: "m/x", max_tokens: 10, messages: [{ role: "user", content: PROMPT }] })
    .withResponse();
  const { request, attributes, attempts } = await traceOf(receiver, response.headers.get("x-request-id")!, 2);
  t.like(attributes, { "gw.attempts": 2, "gen_ai.usage.input_tokens": 5, "http.response.status_code": 200 });
  t.not(request.status?.code, STATUS_ERROR);
  t.is(attempts.length, 2);
  const [failed, answered] = attempts;
  t.is(failed!.status?.code, STATUS_ERROR);
  t.like(attributesOf(failed!), { "gw.attempt.outcome": "failed", "gw.attempt.cause": "http_5xx", "http.response.status_code": 500, "error.type": "http_5xx" });
  t.not(answered!.status?.code, STATUS_ERROR);
  t.like(attributesOf(answered!), { "gw.attempt.outcome": "ok" });
});

test.serial("a call every attempt of which fails: the request span is an error with the gateway's 502", async (t) => {
  fake.enqueue({ status: 500 }, { status: 500 });
  const response = await fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m/x", max_tokens: 10, messages: [{ role: "user", content: PROMPT }] }),
  });
  t.is(response.status, 502);
  const { request, attributes, attempts } = await traceOf(receiver, response.headers.get("x-request-id")!, 2);
  t.is(request.status?.code, STATUS_ERROR);
  t.like(attributes, { "http.response.status_code": 502, "error.type": "502", "gw.attempts": 2 });
  t.deepEqual(
    attempts.map((attempt) => attributesOf(attempt)["gw.attempt.outcome"]),
    ["failed", "failed"],
  );
});

test.serial("an image call: generate_content with the image model, the pictures billed and the attempt under it", async (t) => {
  const response = await fetch(`${gateway.v1}/images/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-image-1", prompt: IMAGE_PROMPT, size: "1024x1024", quality: "low" }),
  });
  t.is(response.status, 200);
  await response.arrayBuffer();
  const { request, attributes, attempts } = await traceOf(receiver, response.headers.get("x-request-id")!, 1);
  t.is(request.kind, SERVER);
  t.is(request.name, "generate_content gpt-image-1");
  t.like(attributes, {
    "gen_ai.operation.name": "generate_content",
    "gen_ai.output.type": "image",
    "gen_ai.response.model": "openai/gpt-image-1",
    "gen_ai.provider.name": "openai",
    "gw.units.images": 1,
    "gw.agent": "traced-agent",
  });
  t.true((attributes["gw.credits"] as number) > 0);
  t.like(attributesOf(attempts[0]!), { "gen_ai.request.model": "gpt-image-1", "gw.attempt.outcome": "ok", "server.port": Number(new URL(images.url).port) });
});

test.serial("a caller's W3C traceparent is continued: same trace id, its span the parent", async (t) => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const parentId = "00f067aa0ba902b7";
  const { response } = await client({ traceparent: `00-${traceId}-${parentId}-01` })
    .chat.completions.create({ model: "m/x", max_tokens: 10, messages: [{ role: "user", content: PROMPT }] })
    .withResponse();
  const { request, attempts } = await traceOf(receiver, response.headers.get("x-request-id")!, 1);
  t.is(request.traceId, traceId);
  t.is(request.parentSpanId, parentId);
  t.is(attempts[0]!.traceId, traceId);
});

test.serial("a request that calls no model is an HTTP span named by its route", async (t) => {
  const response = await fetch(`${gateway.v1}/key`, { headers: { authorization: `Bearer ${key}` } });
  t.is(response.status, 200);
  const { request, attributes } = await traceOf(receiver, response.headers.get("x-request-id")!);
  t.is(request.name, "GET /v1/key");
  t.is(attributes["gen_ai.operation.name"], undefined);
  t.like(attributes, { "http.response.status_code": 200, "gw.key_prefix": key.slice(0, 11) });
});

test.serial("no export holds a key, an upstream key or a prompt", async (t) => {
  await eventually(() => receiver.exports.length > 0 || undefined, "an export");
  t.true(spansOf(receiver).length >= 8);
  for (const { body } of receiver.exports) {
    const text = body.toString("utf8");
    t.false(text.includes(key), "never the key");
    t.false(text.includes(UPSTREAM_KEY), "never the upstream's key");
    t.false(text.includes(PROMPT), "never a prompt");
    t.false(text.includes(IMAGE_PROMPT), "never an image prompt");
    t.false(text.includes("gen_ai.input.messages"));
  }
});

test.serial("http/protobuf: the export arrives as protobuf, flushed at shutdown; captureContent puts the prompt on the span", async (t) => {
  const collector = await startReceiver();
  const upstream = await startFakeOpenAI();
  const home = await makeHome((config) => {
    config.providers = { up: { type: "openai", baseUrl: upstream.url, apiKey: UPSTREAM_KEY } };
    config.routes = [{ prefix: "m/", provider: "up", priority: 1 }];
    config.telemetry = { otlp: { endpoint: `${collector.url}/`, protocol: "http/protobuf" }, captureContent: true };
  });
  const captureKey = await addKey(home, "captured-agent", "pro");
  // Batches wait far longer than the test: the spans leave with the shutdown's flush.
  process.env.OTEL_BSP_SCHEDULE_DELAY = "600000";
  const captured = await startTestGateway(home);
  process.env.OTEL_BSP_SCHEDULE_DELAY = "20";
  try {
    const response = await fetch(`${captured.v1}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${captureKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m/x", max_tokens: 10, messages: [{ role: "user", content: PROMPT }] }),
    });
    t.is(response.status, 200);
    await response.json();
    t.is(collector.exports.length, 0, "nothing exported before the batch is due");
    await captured.shutdown();
    t.true(collector.exports.length >= 1, "the shutdown exported the batch");
    const [sent] = collector.exports;
    t.is(sent!.path, "/v1/traces");
    t.is(sent!.headers["content-type"], "application/x-protobuf");
    t.true(sent!.body.length > 0);
    const bytes = sent!.body;
    t.true(bytes.includes("chat m/x"), "the request's span");
    t.true(bytes.includes("gen_ai.input.messages") && bytes.includes(PROMPT), "the prompt, as the operator asked");
    t.false(bytes.includes(captureKey), "never the key");
  } finally {
    await captured.shutdown();
    await upstream.close();
    await collector.close();
  }
});

test("traces are off unless the config names a collector: no tracer", async (t) => {
  const options = { providers: () => undefined, version: "0", warn: () => undefined };
  t.is(await startTracing({ ...options, settings: telemetrySchema.parse({}) }), undefined);
  t.is(await startTracing({ ...options, settings: telemetrySchema.parse({ otlp: { endpoint: "" } }) }), undefined);
  t.throws(() => telemetrySchema.parse({ otlp: { endpoint: "collector:4318" } }));
});

/** The @opentelemetry modules a `gw serve` of this home imports by the time it listens (a module resolve hook names them). */
async function openTelemetryModulesOf(home: string): Promise<string[]> {
  const hooks = tempDir("gw-otel-hooks-");
  writeFileSync(
    path.join(hooks, "hooks.mjs"),
    'export async function resolve(specifier, context, next) { if (specifier.startsWith("@opentelemetry/")) process.stderr.write(`imports ${specifier}\\n`); return next(specifier, context); }',
  );
  writeFileSync(
    path.join(hooks, "register.mjs"),
    `import { register } from "node:module"; register(${JSON.stringify(pathToFileURL(path.join(hooks, "hooks.mjs")).href)});`,
  );
  const child = spawn(process.execPath, ["--import", path.join(hooks, "register.mjs"), gwBin, "serve", "--home", home, "--port", "0"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", () => resolve());
    child.once("close", (code) => reject(new Error(`gw serve exited ${code}: ${stderr}`)));
  });
  child.kill("SIGTERM");
  await exited;
  return [...new Set(Array.from(stderr.matchAll(/^imports (\S+)$/gm), (match) => match[1]!))].sort();
}

test("a gw serve without telemetry never imports OpenTelemetry; with it, the chosen protocol's exporter only", async (t) => {
  const home = await makeHome();
  t.deepEqual(await openTelemetryModulesOf(home), []);
  editHomeConfig(home, (config) => {
    config.telemetry = { otlp: { endpoint: "http://127.0.0.1:9/", protocol: "http/json" } };
  });
  const loaded = await openTelemetryModulesOf(home);
  t.true(loaded.includes("@opentelemetry/exporter-trace-otlp-http"));
  t.false(loaded.includes("@opentelemetry/exporter-trace-otlp-proto"));
  t.true(loaded.includes("@opentelemetry/sdk-trace-base"));
});

test.serial("a collector that refuses the spans is said so in the server's log, without its headers' values", async (t) => {
  const refusing = await startReceiver(400);
  const upstream = await startFakeOpenAI();
  const home = await makeHome((config) => {
    config.providers = { up: { type: "openai", baseUrl: upstream.url, apiKey: UPSTREAM_KEY } };
    config.routes = [{ prefix: "m/", provider: "up", priority: 1 }];
    config.telemetry = { otlp: { endpoint: refusing.url, protocol: "http/json", headers: { authorization: `Bearer ${COLLECTOR_KEY}` } } };
  });
  const refused = await startTestGateway(home);
  try {
    const response = await fetch(`${refused.url}/health`);
    t.is(response.status, 200);
    const warning = await eventually(() => quietLogger.lines.find((line) => line.startsWith("warn telemetry: spans not exported")), "the export warning");
    t.false(warning!.includes(COLLECTOR_KEY));
    t.true(refusing.exports.length > 0);
  } finally {
    await refused.shutdown();
    await upstream.close();
    await refusing.close();
  }
});

test("gw doctor names where traces go, without the address's credentials or the headers' values", (t) => {
  const settings = telemetrySchema.parse({
    otlp: { endpoint: "https://user:secret@collector.example:4318/otel/?token=abc", headers: { "x-api-key": COLLECTOR_KEY } },
  });
  const check = telemetryCheck(settings)!;
  t.is(check.status, "ok");
  t.is(check.detail, "traces exported over OTLP/HTTP (http/protobuf) to https://collector.example:4318/otel/v1/traces, with the header x-api-key");
  t.is(telemetryCheck(telemetrySchema.parse({})), undefined);
});
