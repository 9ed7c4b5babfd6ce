// Bounds on what gw reads from an upstream: the request's total time covers the whole answer
// (a dripping answer is cut at the deadline, a stream still running ends like a broken one);
// an answer over its size cap ends the call without being read past the cap (the fakes count
// what they wrote, and see the connection closed long before the end); a connect timeout is a
// timeout (504), not a refused connection.
import { spawn } from "node:child_process";
import net from "node:net";
import test from "ava";
import { estimateTextTokens } from "../../src/gateway/billing/prompt-measure.js";
import { type FakeBrave, startFakeBrave } from "../fakes/brave.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai.js";
import { type FakeOpenAIAudio, startFakeOpenAIAudio } from "../fakes/openai-audio.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "../fakes/openai-images.js";
import { AnswerMeter, PAD_MARKER } from "../fakes/paced-answers.js";
import { type FakeSearxng, startFakeSearxng } from "../fakes/searxng.js";
import { type MeteredGateway, startMeteredGateway } from "./_metered-gateway.js";

const MB = 1024 * 1024;
/** What the fakes would send if nobody stopped them. */
const HUGE = 200 * MB;
/** "Long before all of it": what may be in flight in socket buffers when gw stops reading. */
const FAR_BELOW_HUGE = 32 * MB;
const TOTAL_MS = 2000;

let images: FakeOpenAIImages;
let audio: FakeOpenAIAudio;
let spare: FakeOpenAI;
let brave: FakeBrave;
let searxng: FakeSearxng;
let deadlines: MeteredGateway;
let caps: MeteredGateway;
let stuck: { port: number; close: () => void };
let deadlineKey: string;
let capKey: string;

test.before(async () => {
  images = await startFakeOpenAIImages();
  audio = await startFakeOpenAIAudio();
  spare = await startFakeOpenAI();
  brave = await startFakeBrave();
  searxng = await startFakeSearxng();
  stuck = await neverAcceptingPort();
  deadlines = await startMeteredGateway((config) => {
    config.upstream = { retries: 2, retryBaseDelayMs: 1, breakerFailureThreshold: 0, totalTimeoutMs: TOTAL_MS };
    config.providers.openai = { type: "openai", baseUrl: images.url, apiKey: "sk-images" };
    config.providers.stuck = {
      type: "openai",
      baseUrl: `http://127.0.0.1:${stuck.port}/v1`,
      apiKey: "sk-stuck",
      upstream: { connectTimeoutMs: 300, retries: 1, totalTimeoutMs: 60_000 },
    };
    config.routes.push({ prefix: "stuck/", provider: "stuck", priority: 1 });
    config.tools.image = { default: "openai/gpt-image-1", allow: [] };
  });
  caps = await startMeteredGateway((config) => {
    config.upstream = { retries: 2, retryBaseDelayMs: 1, breakerFailureThreshold: 0, maxAnswerBytes: { images: MB, audio: MB, search: MB, error: MB } };
    // The chat and embeddings caps come from the providers' own settings, over the global ones.
    config.providers.up.upstream = { maxAnswerBytes: { chat: MB, embeddings: MB } };
    config.providers.claude.upstream = { maxAnswerBytes: { chat: MB } };
    config.providers.spare = { type: "openai", baseUrl: spare.url, apiKey: "sk-spare" };
    config.routes.push({ prefix: "m/", provider: "spare", priority: 0 });
    config.providers.openai = { type: "openai", baseUrl: images.url, apiKey: "sk-images" };
    config.tools.image = { default: "openai/gpt-image-1", allow: [] };
    config.providers.voice = { type: "openai", baseUrl: audio.url, apiKey: "sk-voice" };
    config.catalog = {
      speech: [
        {
          id: "voice/tts-1",
          provider: "voice",
          model: "tts-1",
          name: "TTS",
          constraints: { maxCharacters: 4096, voices: ["alloy"], defaultVoice: "alloy" },
          pricing: { perCharacter: 15 },
        },
      ],
    };
    config.tools.speech = { default: "voice/tts-1", allow: ["voice/tts-1"] };
    config.providers.brave = { type: "brave", baseUrl: brave.url, apiKey: "brave-token" };
    config.providers.searxng = { type: "searxng", baseUrl: searxng.url };
    config.tools.search = { default: "brave/web", allow: ["searxng/web"] };
  });
  deadlineKey = await deadlines.keyWithCredits("patient", 1_000_000_000);
  capKey = await caps.keyWithCredits("bounded", 1_000_000_000);
});

test.after.always(async () => {
  await deadlines?.close();
  await caps?.close();
  await images?.close();
  await audio?.close();
  await spare?.close();
  await brave?.close();
  await searxng?.close();
  stuck?.close();
});

test.beforeEach(() => {
  for (const fake of [deadlines.openai, deadlines.anthropic, caps.openai, caps.anthropic, spare]) fake.reset();
  images.reset();
  audio.reset();
  brave.reset();
  searxng.reset();
});

/**
 * A TCP port on 127.0.0.1 whose listener never accepts: a child process listens (backlog 1) and
 * then blocks its event loop. Two connections fill the kernel's accept queue; later ones hang in
 * the handshake until their connect timeout.
 */
async function neverAcceptingPort(): Promise<{ port: number; close: () => void }> {
  const script = `const server = require("node:net").createServer();
server.listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () =>
  process.stdout.write(server.address().port + "\\n", () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)));`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve) => child.stdout.once("data", (data) => resolve(Number(String(data).trim()))));
  const fillers: net.Socket[] = [];
  for (let index = 0; index < 2; index += 1) {
    const socket = net.connect(port, "127.0.0.1");
    await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    fillers.push(socket);
  }
  return {
    port,
    close() {
      for (const socket of fillers) socket.destroy();
      child.kill("SIGKILL");
    },
  };
}

interface Answer {
  status: number;
  text: string;
  json: any;
}

async function post(gateway: MeteredGateway, key: string, path: string, body: unknown): Promise<Answer> {
  const response = await fetch(`${gateway.gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

const chat = (stream: boolean, model = "m/cheap") => ({ model, stream, max_tokens: 100_000, messages: [{ role: "user", content: "hi" }] });
const messages = (stream: boolean) => ({ model: "c/cached", stream, max_tokens: 100_000, messages: [{ role: "user", content: "hi" }] });

/** The `data:` payloads of an OpenAI-style SSE answer. */
function dataOf(text: string): string[] {
  return text
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => frame.slice("data: ".length));
}

/** The text of every chunk's delta content. */
function relayedContent(text: string): string {
  return dataOf(text)
    .filter((data) => data !== "[DONE]")
    .map((data) => JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> })
    .map((chunk) => chunk.choices?.map((choice) => choice.delta?.content ?? "").join("") ?? "")
    .join("");
}

// ---- The total deadline covers the whole answer ----

test.serial("a chat answer still dripping at the total deadline ends the call: 504 upstream_timeout naming the total time, no retry", async (t) => {
  const meter = new AnswerMeter();
  deadlines.openai.set({ content: PAD_MARKER, pacing: { padTo: 64 * 1024, drip: { bytes: 64, everyMs: 25 }, meter } });
  const answer = await post(deadlines, deadlineKey, "/v1/chat/completions", chat(false));
  t.is(answer.status, 504, answer.text);
  t.is(answer.json.error.code, "upstream_timeout");
  t.is(answer.json.error.provider, "up");
  t.regex(answer.json.error.message, new RegExp(`total time of ${TOTAL_MS} ms`));
  await meter.ended();
  t.true(meter.closedEarly, "gw closed the connection while the answer was still arriving");
  t.is(deadlines.openai.requests.length, 1, "no retry: no time was left");
  t.is(deadlines.used("patient"), 0, "nothing billed for an answer that never arrived");
});

test.serial("a chat stream still running at the total deadline ends as a broken stream does, billed what was relayed", async (t) => {
  const meter = new AnswerMeter();
  deadlines.openai.set({ endless: { everyMs: 20, meter } });
  const rowsBefore = deadlines.rows("patient").length;
  const answer = await post(deadlines, deadlineKey, "/v1/chat/completions", chat(true));
  t.is(answer.status, 200);
  const data = dataOf(answer.text);
  t.false(data.includes("[DONE]"));
  t.is(JSON.parse(data.at(-1)!).error.code, "stream_interrupted");
  await meter.ended();
  t.true(meter.closedEarly);
  const relayed = relayedContent(answer.text);
  t.true(relayed.length > 0, "some text was relayed before the deadline");
  const rows = deadlines.rows("patient");
  t.is(rows.length, rowsBefore + 1);
  t.is(rows.at(-1)!.units.completion_tokens, estimateTextTokens(relayed.length, Buffer.byteLength(relayed)), "billed the text relayed");
});

test.serial("a native messages stream still running at the total deadline ends with the error event, billed what was relayed", async (t) => {
  const meter = new AnswerMeter();
  deadlines.anthropic.set({ endless: { everyMs: 20, meter } });
  const rowsBefore = deadlines.rows("patient").length;
  const answer = await post(deadlines, deadlineKey, "/anthropic/v1/messages", messages(true));
  t.is(answer.status, 200);
  const events = answer.text.split("\n\n").filter(Boolean);
  t.regex(events.at(-1)!, /^event: error\ndata: \{"type":"error","error":\{"type":"\w+","message":"[^"]+"\}\}$/);
  const deltas = events.filter((event) => event.startsWith("event: content_block_delta"));
  t.true(deltas.length > 0);
  await meter.ended();
  t.true(meter.closedEarly);
  const rows = deadlines.rows("patient");
  t.is(rows.length, rowsBefore + 1);
  t.true(rows.at(-1)!.units.completion_tokens! >= estimateTextTokens(deltas.length * 1024, deltas.length * 1024), "billed at least the text relayed");
});

test.serial("a tool endpoint outside the chat attempts (images) is bounded by the total time too", async (t) => {
  const meter = new AnswerMeter();
  images.set({ pacing: { padTo: 64 * 1024, drip: { bytes: 64, everyMs: 25 }, meter } });
  const answer = await post(deadlines, deadlineKey, "/v1/image/generations", { prompt: "a lighthouse", model: "openai/gpt-image-1" });
  t.is(answer.status, 504, answer.text);
  t.is(answer.json.error.code, "upstream_timeout");
  t.regex(answer.json.error.message, new RegExp(`total time of ${TOTAL_MS} ms`));
  await meter.ended();
  t.true(meter.closedEarly);
  t.is(images.requests.length, 1);
});

test.serial("a connect timeout is a timeout: 504 upstream_timeout when every attempt timed out connecting", async (t) => {
  const answer = await post(deadlines, deadlineKey, "/v1/chat/completions", chat(false, "stuck/any"));
  t.is(answer.status, 504, answer.text);
  t.is(answer.json.error.code, "upstream_timeout");
  t.is(answer.json.error.provider, "stuck");
  // Both attempts (retries: 1) timed out connecting.
  const timedOut = new RegExp(`stuck: connect timeout to 127\\.0\\.0\\.1:${stuck.port} after 300 ms`, "g");
  t.is(answer.json.error.message.match(timedOut)?.length, 2, answer.json.error.message);
  const metrics = await (await fetch(`${deadlines.gateway.url}/metrics`)).text();
  t.regex(metrics, /gw_upstream_failures_total\{provider="stuck",cause="connect_timeout"\} 2\b/);
});

// ---- Answers over their size cap ----

function assertTooLarge(t: any, answer: Answer, provider: string, setting: string): void {
  t.is(answer.status, 502, answer.text.slice(0, 300));
  const error = answer.json.error;
  t.is(error.code, "upstream_answer_too_large");
  t.is(error.provider, provider);
  t.true(error.message.includes("1 MB"), error.message);
  t.true(error.message.includes(setting), error.message);
  t.true(error.message.includes(provider), error.message);
}

test.serial(
  "a chat answer over its cap ends the call with 502 naming the cap and the provider, unread past the cap, not retried nor fallen back from",
  async (t) => {
    const meter = new AnswerMeter();
    caps.openai.set({ content: PAD_MARKER, pacing: { padTo: HUGE, chunked: true, meter } });
    const answer = await post(caps, capKey, "/v1/chat/completions", chat(false));
    assertTooLarge(t, answer, "up", "upstream.maxAnswerBytes.chat");
    await meter.ended();
    t.true(meter.closedEarly);
    t.true(meter.written < FAR_BELOW_HUGE, `the fake wrote ${meter.written} bytes`);
    t.is(caps.openai.requests.length, 1, "not retried");
    t.is(spare.requests.length, 0, "not fallen back from");
  },
);

test.serial("a chat answer announcing a Content-Length over the cap fails at once", async (t) => {
  const meter = new AnswerMeter();
  caps.openai.set({ content: PAD_MARKER, pacing: { padTo: HUGE, meter } });
  const answer = await post(caps, capKey, "/v1/chat/completions", chat(false));
  assertTooLarge(t, answer, "up", "upstream.maxAnswerBytes.chat");
  t.regex(answer.json.error.message, /announced an answer of 200 MB/);
  await meter.ended();
  t.true(meter.written < FAR_BELOW_HUGE, `the fake wrote ${meter.written} bytes`);
});

test.serial("a chat stream passing its cap ends as a broken stream does, and is billed", async (t) => {
  const meter = new AnswerMeter();
  caps.openai.set({ endless: { meter } });
  const rowsBefore = caps.rows("bounded").length;
  const answer = await post(caps, capKey, "/v1/chat/completions", chat(true));
  t.is(answer.status, 200);
  const data = dataOf(answer.text);
  t.is(JSON.parse(data.at(-1)!).error.code, "stream_interrupted");
  const relayed = relayedContent(answer.text);
  t.true(relayed.length > 0 && relayed.length <= MB, `${relayed.length} characters relayed`);
  await meter.ended();
  t.true(meter.closedEarly);
  t.true(meter.written < FAR_BELOW_HUGE, `the fake wrote ${meter.written} bytes`);
  // How much is billed for an answer cut at its cap is the billing's rule (docs/decisions.md §3).
  t.is(caps.rows("bounded").length, rowsBefore + 1);
  t.is(spare.requests.length, 0);
});

test.serial("a messages answer over its cap: 502 in Anthropic's error shape, naming the cap and the provider", async (t) => {
  const meter = new AnswerMeter();
  caps.anthropic.set({ content: PAD_MARKER, pacing: { padTo: HUGE, chunked: true, meter } });
  const answer = await post(caps, capKey, "/anthropic/v1/messages", messages(false));
  t.is(answer.status, 502, answer.text.slice(0, 300));
  t.is(answer.json.type, "error");
  t.regex(answer.json.error.message, /claude.*1 MB.*upstream\.maxAnswerBytes\.chat/);
  await meter.ended();
  t.true(meter.written < FAR_BELOW_HUGE, `the fake wrote ${meter.written} bytes`);
  t.is(caps.anthropic.requests.length, 1);
});

test.serial("an embeddings answer over its cap: 502 naming the embeddings cap", async (t) => {
  const meter = new AnswerMeter();
  caps.openai.set({ pacing: { padTo: HUGE, chunked: true, meter } });
  const answer = await post(caps, capKey, "/v1/embeddings", { model: "m/text-embedding-3-small", input: ["one", "two"] });
  assertTooLarge(t, answer, "up", "upstream.maxAnswerBytes.embeddings");
  await meter.ended();
  t.true(meter.written < FAR_BELOW_HUGE, `the fake wrote ${meter.written} bytes`);
  t.is(caps.openai.requests.length, 1);
});

test.serial("an images answer over its cap: 502 naming the images cap, billed what was held (it was drawn)", async (t) => {
  const meter = new AnswerMeter();
  images.set({ pacing: { padTo: HUGE, chunked: true, meter } });
  const rowsBefore = caps.rows("bounded").length;
  const answer = await post(caps, capKey, "/v1/image/generations", { prompt: "a lighthouse", model: "openai/gpt-image-1" });
  assertTooLarge(t, answer, "openai", "upstream.maxAnswerBytes.images");
  const rows = caps.rows("bounded");
  t.is(rows.length, rowsBefore + 1);
  t.like(rows.at(-1), { endpoint: "image.generations", model: "openai/gpt-image-1", units: { images: 1 } });
  t.true(rows.at(-1)!.credits > 0);
  await meter.ended();
  t.true(meter.written < FAR_BELOW_HUGE, `the fake wrote ${meter.written} bytes`);
  t.is(images.requests.length, 1);
});

test.serial("a speech answer over its cap: 502 naming the audio cap, billed what was held", async (t) => {
  const meter = new AnswerMeter();
  audio.set({ pacing: { padTo: HUGE, chunked: true, meter } });
  const rowsBefore = caps.rows("bounded").length;
  const answer = await post(caps, capKey, "/v1/audio/speech", { model: "voice/tts-1", input: "Hello there.", voice: "alloy", format: "mp3" });
  assertTooLarge(t, answer, "voice", "upstream.maxAnswerBytes.audio");
  const rows = caps.rows("bounded");
  t.is(rows.length, rowsBefore + 1);
  t.like(rows.at(-1), { endpoint: "audio.speech", model: "voice/tts-1", units: { characters: "Hello there.".length } });
  t.true(rows.at(-1)!.credits > 0);
  await meter.ended();
  t.true(meter.written < FAR_BELOW_HUGE, `the fake wrote ${meter.written} bytes`);
  t.is(audio.requests.length, 1);
});

test.serial("a search answer over its cap: 502 naming the search cap, billed the provider's price; the next search provider is not asked", async (t) => {
  const meter = new AnswerMeter();
  brave.set({ results: [{ title: "Huge", url: "https://example.test/huge", description: PAD_MARKER }], pacing: { padTo: HUGE, chunked: true, meter } });
  const rowsBefore = caps.rows("bounded").length;
  const answer = await post(caps, capKey, "/v1/search", { query: "rust async" });
  assertTooLarge(t, answer, "brave", "upstream.maxAnswerBytes.search");
  const rows = caps.rows("bounded");
  t.is(rows.length, rowsBefore + 1);
  t.like(rows.at(-1), { endpoint: "search", provider: "brave", units: { requests: 1, results: 0 } });
  await meter.ended();
  t.true(meter.written < FAR_BELOW_HUGE, `the fake wrote ${meter.written} bytes`);
  t.is(brave.requests.length, 1);
  t.is(searxng.requests.length, 0, "not fallen back from");
});

test.serial("an error body over its cap is not read: the upstream's status stays, its body is replaced by one naming the cap", async (t) => {
  caps.openai.set({ status: 400, errorBody: { error: { message: "x".repeat(3 * MB), type: "invalid_request_error", param: null, code: "huge" } } });
  const answer = await post(caps, capKey, "/v1/chat/completions", chat(false));
  t.is(answer.status, 400);
  t.regex(answer.json.error.message, /up.*error body.*1 MB.*upstream\.maxAnswerBytes\.error/);
  t.true(answer.text.length < 1000);
});
