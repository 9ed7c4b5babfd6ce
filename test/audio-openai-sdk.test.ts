// The official `openai` SDK's audio API pointed at gw: client.audio.transcriptions.create in all
// five response formats (an object for json and verbose_json, a string for text, srt and vtt),
// and client.audio.speech.create against the OpenAI fake and the local espeak-ng engine, the
// audio read back with ffprobe.
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "ava";
import OpenAI, { toFile } from "openai";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { fakeAudio, probeAudio } from "./fakes/audio-files.js";
import { type FakeOpenAIAudio, startFakeOpenAIAudio } from "./fakes/openai-audio.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const SEGMENTS = [
  { start: 0, end: 1.25, text: "The beach was busy." },
  { start: 1.25, end: 2.5, text: "People were swimming." },
];
const TEXT = "The beach was busy. People were swimming.";

let openai: FakeOpenAIAudio;
let gateway: TestGateway;
let client: OpenAI;
let directory: string;
let wavPath: string;

test.before(async () => {
  openai = await startFakeOpenAIAudio({ apiKey: "sk-test", segments: SEGMENTS });
  const home = await makeHome((config) => {
    config.upstream = { retries: 0, retryBaseDelayMs: 1, breakerFailureThreshold: 0 };
    config.providers = { openai: { type: "openai", baseUrl: openai.url, apiKey: "sk-test" }, local: { type: "local" } };
    config.tools.transcription = { default: "openai/whisper-1", allow: ["openai/whisper-1"] };
    config.tools.speech = { default: "local/espeak", allow: ["local/espeak", "openai/tts-1"] };
  });
  const key = await addKey(home, "sdk-listener", "pro");
  gateway = await startTestGateway(home);
  client = new OpenAI({ apiKey: key, baseURL: gateway.v1, maxRetries: 0 });
  directory = mkdtempSync(path.join(os.tmpdir(), "gw-sdk-audio-"));
  wavPath = path.join(directory, "meeting.wav");
  writeFileSync(wavPath, await fakeAudio({ codec: "wav", durationSeconds: 2.5, sampleRate: 16_000 }));
});

test.after.always(async () => {
  await gateway?.shutdown();
  await openai?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

function usageRows(endpoint: string) {
  return UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === endpoint);
}

test.serial("transcriptions.create json: an object {model, text} from a read stream", async (t) => {
  const result = await client.audio.transcriptions.create({ file: createReadStream(wavPath), model: "whisper-1" });
  t.deepEqual(result as unknown, { model: "openai/whisper-1", text: TEXT });
  const sent = openai.requests.at(-1)!;
  t.deepEqual(sent.fields, { model: ["whisper-1"], response_format: ["json"] });
  t.is(sent.file?.filename, "audio.wav");
  const row = usageRows("audio.transcriptions").at(-1)!;
  t.is(row.model, "openai/whisper-1");
  t.is(row.units.seconds, 3);
  t.is(row.credits, 300);
});

test.serial("transcriptions.create verbose_json: an object with language, duration and segments", async (t) => {
  const result = await client.audio.transcriptions.create({ file: createReadStream(wavPath), model: "whisper-1", response_format: "verbose_json" });
  t.is(typeof result, "object");
  t.is(result.text, TEXT);
  t.is(result.language, "english");
  t.is(result.duration, 2.5);
  t.deepEqual(result.segments as unknown, [
    { id: 0, start: 0, end: 1.25, text: "The beach was busy." },
    { id: 1, start: 1.25, end: 2.5, text: "People were swimming." },
  ]);
});

test.serial("transcriptions.create text, srt and vtt: strings", async (t) => {
  const file = () => toFile(createReadStream(wavPath), "meeting.wav", { type: "audio/wav" });
  const text = await client.audio.transcriptions.create({ file: await file(), model: "whisper-1", response_format: "text" });
  t.is(typeof text, "string");
  t.is(text, `${TEXT}\n`);
  const srt = await client.audio.transcriptions.create({ file: await file(), model: "whisper-1", response_format: "srt" });
  t.is(typeof srt, "string");
  t.is(srt, "1\n00:00:00,000 --> 00:00:01,250\nThe beach was busy.\n\n2\n00:00:01,250 --> 00:00:02,500\nPeople were swimming.\n\n");
  const vtt = await client.audio.transcriptions.create({ file: await file(), model: "whisper-1", response_format: "vtt" });
  t.is(typeof vtt, "string");
  t.is(vtt, "WEBVTT\n\n00:00:00.000 --> 00:00:01.250\nThe beach was busy.\n\n00:00:01.250 --> 00:00:02.500\nPeople were swimming.\n\n");
});

test.serial("transcriptions.create errors are APIErrors with the gateway's codes", async (t) => {
  const notAllowed = await t.throwsAsync(client.audio.transcriptions.create({ file: createReadStream(wavPath), model: "gpt-4o-transcribe" }), {
    instanceOf: OpenAI.APIError,
  });
  t.is(notAllowed.status, 400);
  t.is((notAllowed.error as { code?: string }).code, "model_not_allowed");
  const notAudio = await t.throwsAsync(
    client.audio.transcriptions.create({ file: await toFile(Buffer.from("just text"), "x.mp3", { type: "audio/mpeg" }), model: "whisper-1" }),
    { instanceOf: OpenAI.APIError },
  );
  t.is(notAudio.status, 400);
  t.is((notAudio.error as { code?: string }).code, "invalid_audio");
});

test.serial("speech.create with tts-1 reaches the OpenAI fake with voice, speed and format; real wav comes back", async (t) => {
  const input = "The quick brown fox jumps over the lazy dog.";
  const response = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input, response_format: "wav", speed: 1.5 });
  t.is(response.headers.get("content-type"), "audio/wav");
  t.is(response.headers.get("x-service-audio-model"), "openai/tts-1");
  const bytes = Buffer.from(await response.arrayBuffer());
  const probed = await probeAudio(bytes);
  t.truthy(probed, "ffprobe reads it");
  t.is(probed!.codec, "pcm_s16le");
  t.true(probed!.durationSeconds > 0);
  const durationMs = Number(response.headers.get("x-service-audio-duration-ms"));
  t.true(Math.abs(durationMs - probed!.durationSeconds * 1000) <= 50, `${durationMs} ms`);
  const sent = openai.requests.at(-1)!;
  t.is(sent.path, "/v1/audio/speech");
  t.like(sent.json, { model: "tts-1", voice: "alloy", input, response_format: "wav", speed: 1.5 });
  const row = usageRows("audio.speech").at(-1)!;
  t.is(row.model, "openai/tts-1");
  t.is(row.units.characters, input.length);
  t.is(row.credits, input.length * 15);
});

test.serial("speech.create with local/espeak speaks for real, as mp3 by default", async (t) => {
  const calls = openai.requests.length;
  const response = await client.audio.speech.create({ model: "local/espeak", voice: "en-us", input: "Hello from the gateway." });
  t.is(response.headers.get("content-type"), "audio/mpeg");
  const bytes = Buffer.from(await response.arrayBuffer());
  const probed = await probeAudio(bytes);
  t.truthy(probed, "ffprobe reads it");
  t.is(probed!.codec, "mp3");
  t.true(probed!.durationSeconds > 0.5, `${probed!.durationSeconds} s of speech`);
  t.is(openai.requests.length, calls, "nothing sent to OpenAI");
  t.is(usageRows("audio.speech").at(-1)!.model, "local/espeak");
});
