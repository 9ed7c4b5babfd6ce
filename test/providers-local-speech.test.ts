// The `local` provider's speech on the real espeak-ng: WAV with true header sizes, a text that
// starts with `-` spoken (not read as an option), speeds inside and outside espeak's own range,
// the voice list, refusals, and a missing engine (503 material) found again once installed.
import test from "ava";
import { upstreamSchema } from "../src/config/config-schema.js";
import { measureAudio } from "../src/media/audio-convert.js";
import { AudioEngineError } from "../src/media/audio-process.js";
import { findEspeak } from "../src/media/engines.js";
import { espeakRate, listEspeakVoices, parseEspeakVoices, synthesizeWithEspeak, withTrueWavSizes } from "../src/media/espeak.js";
import { UpstreamHttp } from "../src/net/upstream-http.js";
import type { SpeechCapability, SpeechRequest } from "../src/providers/audio-types.js";
import { createLocalSpeech } from "../src/providers/local/local-speech.js";
import { UnsupportedContentError } from "../src/providers/provider-errors.js";
import { providerTypes } from "../src/providers/registry.js";
import { providerHooks } from "./helpers/provider-hooks.js";

const http = new UpstreamHttp();
test.after.always(() => http.close());

function localSpeech(): SpeechCapability {
  const provider = providerTypes.get("local")!.create({ name: "local", config: { type: "local" }, upstream: upstreamSchema.parse({}), http, ...providerHooks });
  return provider.speech!;
}

const options = () => ({ signal: new AbortController().signal });
const request = (overrides: Partial<SpeechRequest> = {}): SpeechRequest => ({
  model: "espeak",
  input: "Hello from the local speech engine.",
  voice: "en-us",
  speed: 1,
  format: "mp3",
  ...overrides,
});

function assertWav(t: any, bytes: Buffer): void {
  t.is(bytes.toString("latin1", 0, 4), "RIFF");
  t.is(bytes.toString("latin1", 8, 12), "WAVE");
  t.is(bytes.readUInt32LE(4), bytes.length - 8);
  const dataAt = bytes.indexOf("data");
  t.true(dataAt > 0);
  t.is(bytes.readUInt32LE(dataAt + 4), bytes.length - dataAt - 8);
}

test("the local provider offers speech", (t) => {
  t.true(providerTypes.get("local")!.capabilities.includes("speech"));
  t.truthy(localSpeech());
});

test("synthesis answers a real WAV with true sizes and a measured length", async (t) => {
  const audio = await localSpeech().synthesize(request(), options());
  t.is(audio.format, "wav");
  assertWav(t, audio.bytes);
  const measured = await measureAudio(audio.bytes, "wav");
  t.like(measured, { codec: "pcm_s16le", channels: 1 });
  t.true(measured.durationMs > 500, `${measured.durationMs} ms`);
});

test("a text that starts with `-` is spoken, not parsed as an option", async (t) => {
  const audio = await localSpeech().synthesize(request({ input: "--help -v xx-nope is what I said" }), options());
  const measured = await measureAudio(audio.bytes, "wav");
  // Read as options, espeak would print its help or fail; spoken, it is over a second of audio.
  t.true(measured.durationMs > 1000, `${measured.durationMs} ms`);
});

test("speed changes the length, inside espeak's range and beyond it (tempo by ffmpeg)", async (t) => {
  const text = "One two three four five six seven eight nine ten.";
  const length = async (speed: number) =>
    (await measureAudio((await localSpeech().synthesize(request({ input: text, speed }), options())).bytes, "wav")).durationMs;
  const [slowest, normal, double, fastest] = await Promise.all([length(0.25), length(1), length(2), length(4)]);
  t.true(double < normal * 0.7, `normal ${normal} ms, 2x ${double} ms`);
  t.true(fastest < double * 0.8, `2x ${double} ms, 4x ${fastest} ms`);
  t.true(slowest > normal * 2.5, `normal ${normal} ms, 0.25x ${slowest} ms`);
});

test("espeakRate: in-range speeds are a rate alone; the rest is tempo", (t) => {
  t.deepEqual(espeakRate(1), { wordsPerMinute: 175, tempo: 1 });
  t.deepEqual(espeakRate(2), { wordsPerMinute: 350, tempo: 1 });
  t.deepEqual(espeakRate(4), { wordsPerMinute: 450, tempo: 700 / 450 });
  t.deepEqual(espeakRate(0.25), { wordsPerMinute: 80, tempo: 43.75 / 80 });
  t.throws(() => espeakRate(5), { instanceOf: RangeError });
});

test("voices come from the engine and include en-us", async (t) => {
  const voices = await localSpeech().voices("espeak", options());
  const us = voices.find((voice) => voice.id === "en-us");
  t.truthy(us);
  t.is(us!.name, "English (America)");
  t.deepEqual(us!.languages, ["en-us", "en"]);
  t.true(voices.length > 50);
  t.true(voices.every((voice) => /^[A-Za-z0-9][A-Za-z0-9_+-]*$/.test(voice.id)));
});

test("parseEspeakVoices reads names with spaces and several other languages", (t) => {
  const output = [
    "Pty Language       Age/Gender VoiceName          File                 Other Languages",
    " 5  cmn             --/M      Chinese_(Mandarin,_latin_as_English) sit/cmn              (zh-cmn 5)(zh 5)",
    " 2  en-us           --/M      English_(America)  gmw/en-US            (en 3)",
    " 5  af              --/M      Afrikaans          gmw/af               ",
    "",
  ].join("\n");
  t.deepEqual(parseEspeakVoices(output), [
    { id: "cmn", name: "Chinese (Mandarin, latin as English)", languages: ["cmn", "zh-cmn", "zh"] },
    { id: "en-us", name: "English (America)", languages: ["en-us", "en"] },
    { id: "af", name: "Afrikaans", languages: ["af"] },
  ]);
});

test("another voice speaks", async (t) => {
  const audio = await localSpeech().synthesize(request({ voice: "fr-fr", input: "Bonjour tout le monde." }), options());
  t.true((await measureAudio(audio.bytes, "wav")).durationMs > 300);
});

test("refusals: a voice it does not have, a speed out of range, another model", async (t) => {
  const speech = localSpeech();
  const voice = await t.throwsAsync(speech.synthesize(request({ voice: "xx-nope" }), options()), { instanceOf: UnsupportedContentError });
  t.is(voice!.param, "voice");
  const speed = await t.throwsAsync(speech.synthesize(request({ speed: 5 }), options()), { instanceOf: UnsupportedContentError });
  t.is(speed!.param, "speed");
  const model = await t.throwsAsync(speech.synthesize(request({ model: "piper" }), options()), { instanceOf: UnsupportedContentError });
  t.is(model!.param, "model");
});

test("synthesizeWithEspeak refuses a voice id that could be an option", async (t) => {
  const espeak = await findEspeak();
  await t.throwsAsync(synthesizeWithEspeak("hi", { binary: espeak!.path, voice: "-x", speed: 1 }), { instanceOf: RangeError });
  await t.throwsAsync(synthesizeWithEspeak("hi", { binary: espeak!.path, voice: "en us", speed: 1 }), { instanceOf: RangeError });
});

test("an abort kills the synthesis and rejects with the signal's reason", async (t) => {
  const espeak = await findEspeak();
  const controller = new AbortController();
  const reason = new Error("caller went away");
  controller.abort(reason);
  t.is(await t.throwsAsync(synthesizeWithEspeak("hello", { binary: espeak!.path, voice: "en-us", speed: 1, signal: controller.signal })), reason);
});

test("no espeak-ng: not ready, and synthesis and voices fail as missing_engine; an install counts at once", async (t) => {
  let installed = false;
  const real = await findEspeak();
  const speech = createLocalSpeech({ lookupEngine: async () => (installed && real ? { status: "found", engine: real } : { status: "missing" }) });
  t.false(await speech.ready!());
  const synthesis = await t.throwsAsync(speech.synthesize(request(), options()), { instanceOf: AudioEngineError });
  t.is(synthesis!.reason, "missing_engine");
  t.regex(synthesis!.message, /espeak-ng is not installed/);
  const voices = await t.throwsAsync(speech.voices("espeak", options()), { instanceOf: AudioEngineError });
  t.is(voices!.reason, "missing_engine");
  installed = true;
  t.true(await speech.ready!());
  t.is((await speech.synthesize(request(), options())).format, "wav");
});

test("an espeak binary that vanished is missing_engine", async (t) => {
  await t.throwsAsync(listEspeakVoices("/nonexistent/espeak-ng"), { instanceOf: AudioEngineError, message: /espeak-ng is not installed/ });
});

test("withTrueWavSizes fixes espeak's placeholder sizes and leaves other bytes alone", (t) => {
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "latin1");
  header.writeUInt32LE(0x7ffff024, 4);
  header.write("WAVEfmt ", 8, "latin1");
  header.writeUInt32LE(16, 16);
  header.write("data", 36, "latin1");
  header.writeUInt32LE(0x7ffff000, 40);
  const wav = Buffer.concat([header, Buffer.alloc(100)]);
  const fixed = withTrueWavSizes(wav);
  t.is(fixed.readUInt32LE(4), 136);
  t.is(fixed.readUInt32LE(40), 100);
  const other = Buffer.from("not a wav file");
  t.is(withTrueWavSizes(other), other);
});
