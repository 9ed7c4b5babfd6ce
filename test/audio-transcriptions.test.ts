// POST /v1/audio/transcriptions end to end: a real in-process gateway in front of fakes that
// speak OpenAI's Audio API and Deepgram's /v1/listen, real audio made by ffmpeg. Every response
// format with its exact body and Content-Type (SRT and WebVTT read back by a real subtitle
// parser), the three ways audio comes in, the request rules, the response formats a model
// cannot produce, allowlisting, billing by the measured length, vendor errors, 402, the removed
// /v1/audio/transcribe and the upstream trace id.
import test from "ava";
import * as mediaCaptions from "media-captions";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { fakeAudio } from "./fakes/audio-files.js";
import { DEEPGRAM_WORDS, type FakeDeepgram, startFakeDeepgram } from "./fakes/deepgram.js";
import { type FakeOpenAIAudio, startFakeOpenAIAudio } from "./fakes/openai-audio.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "./helpers/picture-hosts.js";

// media-captions' declaration files import each other without file extensions, which NodeNext
// resolution does not follow: a typed view of the two functions used (as media-subtitles.test.ts).
interface ParsedCue {
  startTime: number;
  endTime: number;
  text: string;
}
type CueNode = { type: "text"; data: string } | { type: string; tagName: string; voice?: string; children: CueNode[] };
const captions = mediaCaptions as unknown as {
  parseText(text: string, options: { type: "srt" | "vtt"; strict: boolean }): Promise<{ cues: ParsedCue[]; errors: Array<{ message: string }> }>;
  tokenizeVTTCue(cue: ParsedCue): CueNode[];
};

async function parseCues(text: string, type: "srt" | "vtt"): Promise<ParsedCue[]> {
  const parsed = await captions.parseText(text, { type, strict: true });
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map((error) => error.message).join("; "));
  return parsed.cues;
}

const OPENAI_KEY = "sk-test";
const DEEPGRAM_KEY = "dg-test";
const SEGMENTS = [
  { start: 0, end: 1.5, text: "The beach was busy." },
  { start: 1.5, end: 3.25, text: "People were swimming." },
];
const OPENAI_TEXT = "The beach was busy. People were swimming.";
const DEEPGRAM_TEXT = "Hello there, how are you? I am fine, thanks.";
const PER_MINUTE = { "openai/whisper-1": 6000, "openai/gpt-4o-transcribe": 6000, "deepgram/nova-3": 4300 } as Record<string, number>;

let openai: FakeOpenAIAudio;
let deepgram: FakeDeepgram;
let hosts: PictureHosts;
let gateway: TestGateway;
let key: string;
let tinyKey: string;
let shortKey: string;
/** 4 s of 16 kHz mono WAV, 3.7 s of mp3. */
let wav: Buffer;
let mp3: Buffer;

test.before(async () => {
  openai = await startFakeOpenAIAudio({ apiKey: OPENAI_KEY, segments: SEGMENTS });
  deepgram = await startFakeDeepgram({ apiKey: DEEPGRAM_KEY });
  hosts = await startPictureHosts();
  wav = await fakeAudio({ codec: "wav", durationSeconds: 4, sampleRate: 16_000 });
  mp3 = await fakeAudio({ codec: "mp3", durationSeconds: 3.7 });
  hosts.serve("/clip.mp3", mp3, "audio/mpeg");
  const home = await makeHome((config) => {
    config.upstream = { retries: 0, retryBaseDelayMs: 1, breakerFailureThreshold: 0 };
    config.providers = {
      openai: { type: "openai", baseUrl: openai.url, apiKey: OPENAI_KEY },
      deepgram: { type: "deepgram", baseUrl: deepgram.url, apiKey: DEEPGRAM_KEY },
    };
    config.tools.transcription = { default: "openai/whisper-1", allow: ["openai/whisper-1", "openai/gpt-4o-transcribe", "deepgram/nova-3"] };
    // Not even one second of whisper-1 (100 credits); one second but not four.
    config.plans.tiny = { monthlyCredits: 50 };
    config.plans.short = { monthlyCredits: 150 };
  });
  key = await addKey(home, "listener", "pro");
  tinyKey = await addKey(home, "tiny-listener", "tiny");
  shortKey = await addKey(home, "short-listener", "short");
  gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
});

test.after.always(async () => {
  await gateway?.shutdown();
  await hosts?.close();
  await openai?.close();
  await deepgram?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

interface Upload {
  bytes: Buffer;
  name: string;
  type?: string;
}

async function postForm(fields: Record<string, string>, file?: Upload, apiKey = key, path = "/v1/audio/transcriptions"): Promise<Answer> {
  const form = new FormData();
  if (file) form.append("file", new Blob([new Uint8Array(file.bytes)], { type: file.type ?? "audio/wav" }), file.name);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return answerOf(await fetch(`${gateway.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${apiKey}` }, body: form }));
}

async function postJson(body: Record<string, unknown>, apiKey = key, path = "/v1/audio/transcriptions"): Promise<Answer> {
  return answerOf(
    await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
}

function rows(agent = "listener"): UsageRow[] {
  const id = gateway.gateway.store.data.agents.find((entry) => entry.name === agent)?.id;
  return UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.agent === id);
}

/** Upstream requests so far, both vendors. */
function upstreamCalls(): number {
  return openai.requests.length + deepgram.requests.length;
}

/** Nothing about the vendors' keys in what the caller sees. */
function assertNoVendorKey(t: { false: (value: boolean, message?: string) => void }, answer: Answer): void {
  const headers = [...answer.headers.entries()].map(([name, value]) => `${name}: ${value}`).join("\n");
  for (const secret of [OPENAI_KEY, DEEPGRAM_KEY]) {
    t.false(answer.text.includes(secret), `the body names ${secret}`);
    t.false(headers.includes(secret), `a header names ${secret}`);
  }
}

function assertBilled(
  t: { is: (actual: unknown, expected: unknown, message?: string) => void; truthy: (value: unknown, message?: string) => void },
  row: UsageRow | undefined,
  model: string,
  seconds: number,
) {
  t.truthy(row, "a usage row");
  t.is(row!.endpoint, "audio.transcriptions");
  t.is(row!.model, model);
  t.is(row!.provider, model.split("/")[0]);
  t.is(row!.units.seconds, Math.ceil(seconds));
  t.is(row!.credits, Math.ceil((Math.ceil(seconds) * PER_MINUTE[model]!) / 60));
}

// ---- the five formats ----

test.serial("whisper-1 json: {model, text}, sent upstream as a multipart form with the key, billed by the measured length", async (t) => {
  const before = rows().length;
  const answer = await postForm({ model: "openai/whisper-1", response_format: "json" }, { bytes: wav, name: "meeting.wav" });
  t.is(answer.status, 200, answer.text);
  t.regex(answer.headers.get("content-type") ?? "", /^application\/json/);
  t.deepEqual(answer.body, { model: "openai/whisper-1", text: OPENAI_TEXT });
  const sent = openai.requests.at(-1)!;
  t.is(sent.headers.authorization, `Bearer ${OPENAI_KEY}`);
  t.deepEqual(sent.fields, { model: ["whisper-1"], response_format: ["json"] });
  t.deepEqual(sent.file, { field: "file", filename: "audio.wav", contentType: "audio/wav", size: wav.length });
  t.is(Number(answer.headers.get("x-service-audio-duration-ms")), 4000);
  t.is(answer.headers.get("x-service-upstream-trace-id"), `req_audio_${openai.requests.length}`);
  t.is(rows().length, before + 1);
  assertBilled(t, rows().at(-1), "openai/whisper-1", 4);
  t.is(rows().at(-1)!.credits, 400);
  assertNoVendorKey(t, answer);
});

test.serial("whisper-1 verbose_json: model, text, language, task, duration and segments from id 0, no speaker", async (t) => {
  const answer = await postForm({ model: "openai/whisper-1", response_format: "verbose_json" }, { bytes: wav, name: "meeting.wav" });
  t.is(answer.status, 200, answer.text);
  t.regex(answer.headers.get("content-type") ?? "", /^application\/json/);
  t.deepEqual(answer.body, {
    model: "openai/whisper-1",
    text: OPENAI_TEXT,
    language: "english",
    task: "transcribe",
    duration: 4,
    segments: [
      { id: 0, start: 0, end: 1.5, text: "The beach was busy." },
      { id: 1, start: 1.5, end: 3.25, text: "People were swimming." },
    ],
  });
  for (const segment of answer.body.segments) t.false("speaker" in segment);
  t.deepEqual(openai.requests.at(-1)!.fields, { model: ["whisper-1"], response_format: ["verbose_json"], "timestamp_granularities[]": ["segment"] });
});

test.serial("whisper-1 text: the transcript as text/plain, no JSON", async (t) => {
  const answer = await postForm({ model: "openai/whisper-1", response_format: "text" }, { bytes: wav, name: "meeting.wav" });
  t.is(answer.status, 200, answer.text);
  t.is(answer.headers.get("content-type"), "text/plain; charset=utf-8");
  t.is(answer.text, `${OPENAI_TEXT}\n`);
  t.is(answer.body, undefined, "not JSON");
  t.is(answer.headers.get("x-service-audio-duration-ms"), "4000");
  t.is(answer.headers.get("x-service-upstream-trace-id"), `req_audio_${openai.requests.length}`);
  t.deepEqual(openai.requests.at(-1)!.fields?.response_format, ["json"]);
});

test.serial("whisper-1 srt: application/x-subrip, parsed back cue by cue", async (t) => {
  const answer = await postForm({ model: "openai/whisper-1", response_format: "srt" }, { bytes: wav, name: "meeting.wav" });
  t.is(answer.status, 200, answer.text);
  t.is(answer.headers.get("content-type"), "application/x-subrip; charset=utf-8");
  t.is(answer.text, "1\n00:00:00,000 --> 00:00:01,500\nThe beach was busy.\n\n2\n00:00:01,500 --> 00:00:03,250\nPeople were swimming.\n\n");
  const cues = await parseCues(answer.text, "srt");
  t.deepEqual(
    cues.map((cue) => [cue.startTime, cue.endTime, cue.text]),
    [
      [0, 1.5, "The beach was busy."],
      [1.5, 3.25, "People were swimming."],
    ],
  );
});

test.serial("whisper-1 vtt: text/vtt, parsed back, no voice tags", async (t) => {
  const answer = await postForm({ model: "openai/whisper-1", response_format: "vtt" }, { bytes: wav, name: "meeting.wav" });
  t.is(answer.status, 200, answer.text);
  t.is(answer.headers.get("content-type"), "text/vtt; charset=utf-8");
  t.true(answer.text.startsWith("WEBVTT\n\n"));
  const cues = await parseCues(answer.text, "vtt");
  t.deepEqual(
    cues.map((cue) => [cue.startTime, cue.endTime, cue.text]),
    [
      [0, 1.5, "The beach was busy."],
      [1.5, 3.25, "People were swimming."],
    ],
  );
  t.deepEqual(
    cues.map((cue) => captions.tokenizeVTTCue(cue)),
    [[{ type: "text", data: "The beach was busy." }], [{ type: "text", data: "People were swimming." }]] as unknown,
  );
});

test.serial("nova-3 json: {model, text}, the audio's bytes sent with the Token key, billed at 4300 a minute", async (t) => {
  const before = rows().length;
  const answer = await postForm({ model: "deepgram/nova-3" }, { bytes: wav, name: "meeting.wav" });
  t.is(answer.status, 200, answer.text);
  t.deepEqual(answer.body, { model: "deepgram/nova-3", text: DEEPGRAM_TEXT });
  const sent = deepgram.requests.at(-1)!;
  t.is(sent.headers.authorization, `Token ${DEEPGRAM_KEY}`);
  t.is(sent.contentType, "audio/wav");
  t.is(sent.bodyBytes, wav.length);
  t.is(sent.query.model, "nova-3");
  t.is(sent.query.diarize, "true");
  t.regex(answer.headers.get("x-service-upstream-trace-id") ?? "", /^[0-9a-f-]{36}$/);
  t.is(rows().length, before + 1);
  assertBilled(t, rows().at(-1), "deepgram/nova-3", 4);
  t.is(rows().at(-1)!.credits, 287);
  assertNoVendorKey(t, answer);
});

test.serial("nova-3 verbose_json: segments are the utterances with their speakers, speaker 0 kept", async (t) => {
  const answer = await postForm({ model: "deepgram/nova-3", response_format: "verbose_json" }, { bytes: wav, name: "meeting.wav" });
  t.is(answer.status, 200, answer.text);
  t.deepEqual(answer.body, {
    model: "deepgram/nova-3",
    text: DEEPGRAM_TEXT,
    language: "en",
    task: "transcribe",
    duration: 4,
    segments: [
      { id: 0, start: DEEPGRAM_WORDS[0]!.start, end: DEEPGRAM_WORDS[4]!.end, text: "Hello there, how are you?", speaker: 0 },
      { id: 1, start: DEEPGRAM_WORDS[5]!.start, end: DEEPGRAM_WORDS[8]!.end, text: "I am fine, thanks.", speaker: 1 },
    ],
  });
});

test.serial("nova-3 text, srt and vtt: speakers as an SRT prefix and WebVTT voice tags", async (t) => {
  const text = await postForm({ model: "deepgram/nova-3", response_format: "text" }, { bytes: wav, name: "meeting.wav" });
  t.is(text.status, 200, text.text);
  t.is(text.headers.get("content-type"), "text/plain; charset=utf-8");
  t.is(text.text, `${DEEPGRAM_TEXT}\n`);

  const srt = await postForm({ model: "deepgram/nova-3", response_format: "srt" }, { bytes: wav, name: "meeting.wav" });
  t.is(srt.status, 200, srt.text);
  t.is(srt.headers.get("content-type"), "application/x-subrip; charset=utf-8");
  const srtCues = await parseCues(srt.text, "srt");
  t.deepEqual(
    srtCues.map((cue) => [cue.startTime, cue.endTime, cue.text]),
    [
      [0.08, 1.4, "Speaker 0: Hello there, how are you?"],
      [2.6, 3.6, "Speaker 1: I am fine, thanks."],
    ],
  );

  const vtt = await postForm({ model: "deepgram/nova-3", response_format: "vtt" }, { bytes: wav, name: "meeting.wav" });
  t.is(vtt.status, 200, vtt.text);
  t.is(vtt.headers.get("content-type"), "text/vtt; charset=utf-8");
  t.true(vtt.text.includes("<v Speaker 0>Hello there, how are you?"));
  const vttCues = await parseCues(vtt.text, "vtt");
  t.deepEqual(
    vttCues.map((cue) => [cue.startTime, cue.endTime]),
    [
      [0.08, 1.4],
      [2.6, 3.6],
    ],
  );
  t.deepEqual(
    vttCues.map((cue) => captions.tokenizeVTTCue(cue)),
    [
      [{ tagName: "span", type: "v", voice: "Speaker 0", children: [{ type: "text", data: "Hello there, how are you?" }] }],
      [{ tagName: "span", type: "v", voice: "Speaker 1", children: [{ type: "text", data: "I am fine, thanks." }] }],
    ] as unknown,
  );
});

// ---- the audio as JSON: base64 and URL ----

test.serial("mediaBase64, bare and as a data: URL, is transcribed like an upload", async (t) => {
  for (const mediaBase64 of [mp3.toString("base64"), `data:audio/mpeg;base64,${mp3.toString("base64")}`]) {
    const answer = await postJson({ mediaBase64, model: "openai/whisper-1" });
    t.is(answer.status, 200, answer.text);
    t.deepEqual(answer.body, { model: "openai/whisper-1", text: OPENAI_TEXT });
    const sent = openai.requests.at(-1)!;
    t.deepEqual(sent.file, { field: "file", filename: "audio.mp3", contentType: "audio/mpeg", size: mp3.length });
    const ms = Number(answer.headers.get("x-service-audio-duration-ms"));
    t.true(Math.abs(ms - 3700) <= 50, `${ms} ms`);
    assertBilled(t, rows().at(-1), "openai/whisper-1", 3.7);
  }
});

test.serial("mediaUrl on a public host is fetched through the SSRF-safe fetcher", async (t) => {
  const answer = await postJson({ mediaUrl: `${hosts.publicBase}/clip.mp3`, model: "deepgram/nova-3", response_format: "verbose_json" });
  t.is(answer.status, 200, answer.text);
  t.true(hosts.publicHits.includes("/clip.mp3"));
  t.is(answer.body.model, "deepgram/nova-3");
  t.is(answer.body.segments.length, 2);
  t.is(deepgram.requests.at(-1)!.bodyBytes, mp3.length);
  t.is(deepgram.requests.at(-1)!.contentType, "audio/mpeg");
});

test.serial("mediaUrl at a private address is refused 400 url_not_allowed; nothing is fetched or sent upstream", async (t) => {
  const calls = upstreamCalls();
  const billed = rows().length;
  const answer = await postJson({ mediaUrl: `http://127.0.0.1:${hosts.internal.port}/clip.mp3` });
  t.is(answer.status, 400, answer.text);
  t.is(answer.body.error.code, "url_not_allowed");
  t.is(answer.body.error.param, "mediaUrl");
  t.is(hosts.internal.connections, 0);
  t.deepEqual(hosts.internal.requests, []);
  t.is(upstreamCalls(), calls);
  t.is(rows().length, billed);
  for (const mediaUrl of ["file:///etc/passwd", `ftp://127.0.0.1:${hosts.internal.port}/clip.mp3`, "http://10.0.0.1/clip.mp3"]) {
    const other = await postJson({ mediaUrl });
    t.is(other.status, 400, mediaUrl);
    t.is(other.body.error.code, "url_not_allowed", mediaUrl);
  }
  t.is(hosts.internal.connections, 0);
  t.is(upstreamCalls(), calls);
});

// ---- the request's rules ----

test.serial("exactly one of file, mediaUrl, mediaBase64: none or two are 400 naming the fields", async (t) => {
  const calls = upstreamCalls();
  const none = await postJson({ model: "openai/whisper-1" });
  t.is(none.status, 400);
  t.is(none.body.error.type, "invalid_request_error");
  for (const name of ["file", "mediaUrl", "mediaBase64"]) t.true(none.body.error.message.includes(name), none.body.error.message);
  const twoJson = await postJson({ mediaUrl: `${hosts.publicBase}/clip.mp3`, mediaBase64: mp3.toString("base64") });
  t.is(twoJson.status, 400);
  t.regex(twoJson.body.error.message, /exactly one of .*file.*mediaUrl.*mediaBase64.*2 were sent/);
  const twoForm = await postForm({ mediaUrl: `${hosts.publicBase}/clip.mp3` }, { bytes: wav, name: "a.wav" });
  t.is(twoForm.status, 400);
  t.regex(twoForm.body.error.message, /exactly one of .*file.*mediaUrl.*mediaBase64/);
  const noneForm = await postForm({ model: "openai/whisper-1" });
  t.is(noneForm.status, 400);
  t.regex(noneForm.body.error.message, /Missing audio/);
  t.is(upstreamCalls(), calls);
});

test.serial("an unknown JSON field, a bad response_format or a bad language is 400 naming it", async (t) => {
  const calls = upstreamCalls();
  const audio = mp3.toString("base64");
  const unknown = await postJson({ mediaBase64: audio, diarize: true });
  t.is(unknown.status, 400);
  t.is(unknown.body.error.message, "Unknown parameter: 'diarize'.");
  t.is(unknown.body.error.param, "diarize");
  const format = await postJson({ mediaBase64: audio, response_format: "diarized_json" });
  t.is(format.status, 400);
  t.is(format.body.error.param, "response_format");
  const formFormat = await postForm({ response_format: "xml" }, { bytes: wav, name: "a.wav" });
  t.is(formFormat.status, 400);
  t.is(formFormat.body.error.param, "response_format");
  for (const language of ["english!", "e", "en_US", ""]) {
    const bad = await postJson({ mediaBase64: audio, language });
    t.is(bad.status, 400, language);
    t.is(bad.body.error.param, "language", language);
  }
  t.is(upstreamCalls(), calls);
});

test.serial("a language hint is sent upstream", async (t) => {
  const answer = await postForm({ language: "en", response_format: "verbose_json" }, { bytes: wav, name: "a.wav" });
  t.is(answer.status, 200, answer.text);
  t.deepEqual(openai.requests.at(-1)!.fields?.language, ["en"]);
  const dg = await postForm({ language: "pt-BR", model: "deepgram/nova-3", response_format: "verbose_json" }, { bytes: wav, name: "a.wav" });
  t.is(dg.status, 200, dg.text);
  t.is(deepgram.requests.at(-1)!.query.language, "pt-BR");
});

test.serial("gpt-4o-transcribe: verbose_json, srt and vtt are 400 unsupported_response_format naming openai, nothing sent or billed; json works", async (t) => {
  for (const response_format of ["verbose_json", "srt", "vtt"]) {
    const calls = upstreamCalls();
    const billed = rows().length;
    const answer = await postForm({ model: "openai/gpt-4o-transcribe", response_format }, { bytes: wav, name: "a.wav" });
    t.is(answer.status, 400, answer.text);
    t.is(answer.body.error.code, "unsupported_response_format");
    t.is(answer.body.error.provider, "openai");
    t.is(answer.body.error.param, "response_format");
    t.true(answer.body.error.message.includes("openai"), answer.body.error.message);
    t.true(answer.body.error.message.includes(response_format), answer.body.error.message);
    t.is(upstreamCalls(), calls);
    t.is(rows().length, billed);
  }
  const json = await postForm({ model: "openai/gpt-4o-transcribe", response_format: "json" }, { bytes: wav, name: "a.wav" });
  t.is(json.status, 200, json.text);
  t.deepEqual(json.body, { model: "openai/gpt-4o-transcribe", text: OPENAI_TEXT });
  t.deepEqual(openai.requests.at(-1)!.fields, { model: ["gpt-4o-transcribe"], response_format: ["json"] });
  assertBilled(t, rows().at(-1), "openai/gpt-4o-transcribe", 4);
});

test.serial("a model that is not allowlisted is 400 model_not_allowed; bare whisper-1 is openai/whisper-1", async (t) => {
  const calls = upstreamCalls();
  const refused = await postForm({ model: "openai/gpt-4o-mini-transcribe" }, { bytes: wav, name: "a.wav" });
  t.is(refused.status, 400, refused.text);
  t.is(refused.body.error.code, "model_not_allowed");
  t.is(refused.body.error.param, "model");
  t.is(upstreamCalls(), calls);
  const bare = await postForm({ model: "whisper-1" }, { bytes: wav, name: "a.wav" });
  t.is(bare.status, 200, bare.text);
  t.is(bare.body.model, "openai/whisper-1");
  t.is(rows().at(-1)!.model, "openai/whisper-1");
});

test.serial("a free plan cannot use a paid model (gpt-4o-transcribe): 403, nothing sent", async (t) => {
  const freeKey = await addKey(gateway.home, "free-listener", "free");
  const calls = upstreamCalls();
  const answer = await postForm({ model: "openai/gpt-4o-transcribe" }, { bytes: wav, name: "a.wav" }, freeKey);
  t.is(answer.status, 403, answer.text);
  t.is(answer.body.error.code, "model_requires_upgrade");
  t.is(upstreamCalls(), calls);
  const whisper = await postForm({ model: "openai/whisper-1" }, { bytes: wav, name: "a.wav" }, freeKey);
  t.is(whisper.status, 200, whisper.text);
});

test("a fresh config has no transcription tool: 503 provider_not_configured", async (t) => {
  const home = await makeHome();
  const freshKey = await addKey(home, "nobody", "pro");
  const fresh = await startTestGateway(home);
  t.teardown(() => fresh.shutdown());
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(wav)], { type: "audio/wav" }), "a.wav");
  const answer = await answerOf(
    await fetch(`${fresh.url}/v1/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${freshKey}` }, body: form }),
  );
  t.is(answer.status, 503, answer.text);
  t.is(answer.body.error.code, "provider_not_configured");
});

// ---- billing and vendor errors ----

test.serial("one usage row per answered call; the duration header is the real length", async (t) => {
  const before = rows().length;
  for (const seconds of [1.2, 2.5]) {
    const audio = await fakeAudio({ codec: "flac", durationSeconds: seconds });
    const answer = await postForm({}, { bytes: audio, name: "clip.flac", type: "audio/flac" });
    t.is(answer.status, 200, answer.text);
    const ms = Number(answer.headers.get("x-service-audio-duration-ms"));
    t.true(Math.abs(ms - seconds * 1000) <= 50, `${ms} ms for ${seconds} s`);
    assertBilled(t, rows().at(-1), "openai/whisper-1", seconds);
  }
  t.is(rows().length, before + 2);
  t.deepEqual(
    rows()
      .slice(before)
      .map((row) => row.units.seconds),
    [2, 3],
  );
});

test.serial("a vendor's 400 passes through verbatim, unbilled; its 5xx is 502 naming the provider, unbilled", async (t) => {
  const billed = rows().length;
  const vendorError = { error: { message: "Audio file is too quiet to transcribe.", type: "invalid_request_error", param: "file", code: "audio_too_quiet" } };
  openai.enqueue({ status: 400, errorBody: vendorError });
  const bad = await postForm({}, { bytes: wav, name: "a.wav" });
  t.is(bad.status, 400, bad.text);
  t.deepEqual(bad.body, vendorError);
  assertNoVendorKey(t, bad);

  openai.enqueue({ status: 500 });
  const calls = openai.requests.length;
  const down = await postForm({}, { bytes: wav, name: "a.wav" });
  t.is(down.status, 502, down.text);
  t.is(down.body.error.code, "upstream_unavailable");
  t.is(down.body.error.provider, "openai");
  t.is(openai.requests.length, calls + 1, "retries 0: one attempt");
  assertNoVendorKey(t, down);

  deepgram.enqueue({ status: 503 });
  const dgDown = await postForm({ model: "deepgram/nova-3" }, { bytes: wav, name: "a.wav" });
  t.is(dgDown.status, 502, dgDown.text);
  t.is(dgDown.body.error.provider, "deepgram");
  assertNoVendorKey(t, dgDown);

  deepgram.enqueue({ status: 400 });
  const dgBad = await postForm({ model: "deepgram/nova-3" }, { bytes: wav, name: "a.wav" });
  t.is(dgBad.status, 400, dgBad.text);
  t.is(dgBad.body.error.code, "Bad Request");
  assertNoVendorKey(t, dgBad);

  t.is(rows().length, billed, "no usage row for a failed call");
  t.is(
    (await gateway.gateway.ledger.planBalance(gateway.gateway.store.data.agents.find((agent) => agent.name === "listener")!.id, 0)).used,
    sumCredits(rows()),
  );
});

function sumCredits(list: UsageRow[]): number {
  return list.reduce((sum, row) => sum + row.credits, 0);
}

test.serial("402 when the agent's credits cannot pay, before anything is sent upstream", async (t) => {
  const calls = upstreamCalls();
  const answer = await postForm({}, { bytes: wav, name: "a.wav" }, tinyKey);
  t.is(answer.status, 402, answer.text);
  t.is(answer.body.error.code, "insufficient_credits");
  const fetched = hosts.publicHits.length;
  const json = await postJson({ mediaUrl: `${hosts.publicBase}/clip.mp3` }, tinyKey);
  t.is(json.status, 402, json.text);
  t.is(hosts.publicHits.length, fetched, "nothing downloaded");
  t.is(upstreamCalls(), calls);
  t.deepEqual(rows("tiny-listener"), []);
});

test.serial("402 when the price of the measured length does not fit, though one second would; still nothing sent", async (t) => {
  const calls = upstreamCalls();
  const long = await postForm({}, { bytes: wav, name: "a.wav" }, shortKey);
  t.is(long.status, 402, long.text);
  t.is(long.body.error.code, "insufficient_credits");
  t.is(upstreamCalls(), calls);
  t.deepEqual(rows("short-listener"), []);
  const second = await fakeAudio({ codec: "wav", durationSeconds: 1, sampleRate: 16_000 });
  const fits = await postForm({}, { bytes: second, name: "a.wav" }, shortKey);
  t.is(fits.status, 200, fits.text);
  t.deepEqual(
    rows("short-listener").map((row) => row.credits),
    [100],
  );
});

test.serial("a vendor answer without the segments asked for, or without text, is 502 and unbilled", async (t) => {
  const billed = rows().length;
  openai.enqueue({ omitSegments: true });
  const noSegments = await postForm({ response_format: "srt" }, { bytes: wav, name: "a.wav" });
  t.is(noSegments.status, 502, noSegments.text);
  t.is(noSegments.body.error.provider, "openai");
  openai.enqueue({ malformed: true });
  const malformed = await postForm({}, { bytes: wav, name: "a.wav" });
  t.is(malformed.status, 502, malformed.text);
  deepgram.enqueue({ malformed: true });
  const dgMalformed = await postForm({ model: "deepgram/nova-3" }, { bytes: wav, name: "a.wav" });
  t.is(dgMalformed.status, 502, dgMalformed.text);
  t.is(rows().length, billed);
  // Deepgram without utterances: the segments are rebuilt from the words, speakers kept.
  deepgram.enqueue({ omitUtterances: true });
  const rebuilt = await postForm({ model: "deepgram/nova-3", response_format: "verbose_json" }, { bytes: wav, name: "a.wav" });
  t.is(rebuilt.status, 200, rebuilt.text);
  t.deepEqual(
    rebuilt.body.segments.map((segment: { speaker?: number }) => segment.speaker),
    [0, 1],
  );
});

test.serial("/v1/audio/transcribe is 410 endpoint_removed naming /v1/audio/transcriptions", async (t) => {
  const calls = upstreamCalls();
  const answer = await postForm({}, { bytes: wav, name: "a.wav" }, key, "/v1/audio/transcribe");
  t.is(answer.status, 410, answer.text);
  t.is(answer.body.error.code, "endpoint_removed");
  t.true(answer.body.error.message.includes("/v1/audio/transcriptions"));
  const json = await postJson({ mediaBase64: mp3.toString("base64") }, key, "/v1/audio/transcribe");
  t.is(json.status, 410);
  t.is(upstreamCalls(), calls);
});

test.serial("X-Service-Upstream-Trace-Id is the vendor's request id", async (t) => {
  const answer = await postForm({}, { bytes: wav, name: "a.wav" });
  t.is(answer.status, 200, answer.text);
  t.is(answer.headers.get("x-service-upstream-trace-id"), `req_audio_${openai.requests.length}`);
  deepgram.enqueue({ requestId: "dg-req-0042" });
  const dg = await postForm({ model: "deepgram/nova-3" }, { bytes: wav, name: "a.wav" });
  t.is(dg.status, 200, dg.text);
  t.is(dg.headers.get("x-service-upstream-trace-id"), "dg-req-0042");
  t.truthy(dg.headers.get("x-request-id"));
});

test.serial("AAC audio: OpenAI does not read it (400 naming openai, nothing sent or billed); Deepgram does", async (t) => {
  const aac = await fakeAudio({ codec: "aac", durationSeconds: 2 });
  const before = rows().length;
  const calls = upstreamCalls();
  const refused = await postForm({}, { bytes: aac, name: "voice.aac", type: "audio/aac" });
  t.is(refused.status, 400, refused.text);
  t.like(refused.body.error, { param: "file", provider: "openai" });
  t.regex(refused.body.error.message, /audio\/aac audio is not read by OpenAI's transcription/);
  t.is(upstreamCalls(), calls);
  t.is(rows().length, before);
  const accepted = await postForm({ model: "deepgram/nova-3" }, { bytes: aac, name: "voice.aac", type: "audio/aac" });
  t.is(accepted.status, 200, accepted.text);
  t.is(deepgram.requests.at(-1)!.contentType, "audio/aac");
});

test.serial("OpenAI's optional form fields are accepted as the SDK sends them; an unknown form field is 400 naming it", async (t) => {
  const accepted = await postForm(
    { prompt: "A beach.", temperature: "0.2", "timestamp_granularities[]": "segment", response_format: "verbose_json" },
    { bytes: wav, name: "a.wav" },
  );
  t.is(accepted.status, 200, accepted.text);
  const calls = upstreamCalls();
  const refused = await postForm({ colour: "blue" }, { bytes: wav, name: "a.wav" });
  t.is(refused.status, 400);
  t.is(refused.body.error.param, "colour");
  const hot = await postForm({ temperature: "7" }, { bytes: wav, name: "a.wav" });
  t.is(hot.status, 400);
  t.is(hot.body.error.param, "temperature");
  t.is(upstreamCalls(), calls);
});
