// The audio capabilities of each provider type, through the registry and the real UpstreamHttp,
// against fakes speaking OpenAI's Audio API, Deepgram's /v1/listen and ElevenLabs' TTS: what went
// upstream (auth, fields, query, body) and what came back (transcripts, audio, voices, errors).

import type { ExecutionContext } from "ava";
import test from "ava";
import { speechModelSchema } from "../src/config/audio-catalog-schema.js";
import { type UpstreamSettings, upstreamSchema } from "../src/config/config-schema.js";
import { DEFAULT_SPEECH_MODEL_INPUTS } from "../src/config/default-audio-models.js";
import { secretRedactor } from "../src/net/secret-redaction.js";
import { UpstreamHttp } from "../src/net/upstream-http.js";
import type { SpeechCapability, SpeechFormat, TranscriptionCapability, TranscriptionRequest } from "../src/providers/audio-types.js";
import { segmentsFromWords } from "../src/providers/deepgram/convert-from-deepgram-transcript.js";
import { elevenLabsRequest } from "../src/providers/elevenlabs/elevenlabs-request.js";
import { createElevenLabsVoices } from "../src/providers/elevenlabs/elevenlabs-voices.js";
import type { Provider, ProviderContext } from "../src/providers/provider.js";
import { UnsupportedContentError, UpstreamHttpError, UpstreamNetworkError } from "../src/providers/provider-errors.js";
import { providerTypes } from "../src/providers/registry.js";
import { fakeAudio, probeAudio } from "./fakes/audio-files.js";
import { DEEPGRAM_WORDS, type FakeDeepgram, startFakeDeepgram } from "./fakes/deepgram.js";
import { type FakeElevenLabs, RACHEL_VOICE_ID, startFakeElevenLabs } from "./fakes/elevenlabs.js";
import { startFakeOpenAIAudio } from "./fakes/openai-audio.js";
import { providerHooks } from "./helpers/provider-hooks.js";

const KEY = "sk-audio-test-key-0123456789";
const http = new UpstreamHttp();
const settings: UpstreamSettings = { ...upstreamSchema.parse({}), retries: 0 };
const options = () => ({ signal: new AbortController().signal });

test.after.always(() => http.close());

function contextOf(type: string, baseUrl: string, apiKey: string | undefined): ProviderContext {
  const config = apiKey === undefined ? { type, baseUrl } : { type, baseUrl, apiKey };
  return { name: type, config, upstream: settings, http, redact: secretRedactor([apiKey]), warn: providerHooks.warn };
}

/** `null`: no key configured (a self-hosted server). */
function providerOf(type: string, baseUrl: string, apiKey?: string | null): Provider {
  return providerTypes.get(type)!.create(contextOf(type, baseUrl, apiKey === null ? undefined : (apiKey ?? KEY)));
}

async function openai(t: ExecutionContext, fakeOptions: Parameters<typeof startFakeOpenAIAudio>[0] = { apiKey: KEY }, apiKey?: string | null) {
  const fake = await startFakeOpenAIAudio(fakeOptions);
  t.teardown(() => fake.close());
  const provider = providerOf("openai", fake.url, apiKey);
  return { fake, transcription: provider.transcription!, speech: provider.speech! };
}

async function deepgram(t: ExecutionContext): Promise<{ fake: FakeDeepgram; transcription: TranscriptionCapability }> {
  const fake = await startFakeDeepgram({ apiKey: KEY });
  t.teardown(() => fake.close());
  return { fake, transcription: providerOf("deepgram", fake.url).transcription! };
}

async function elevenlabs(t: ExecutionContext): Promise<{ fake: FakeElevenLabs; speech: SpeechCapability }> {
  const fake = await startFakeElevenLabs({ apiKey: KEY });
  t.teardown(() => fake.close());
  return { fake, speech: providerOf("elevenlabs", fake.url).speech! };
}

async function wavRequest(model: string, extra: Partial<TranscriptionRequest> = {}): Promise<TranscriptionRequest> {
  const bytes = await fakeAudio({ codec: "wav", durationSeconds: 2, sampleRate: 16_000 });
  return { model, audio: { bytes, filename: "clip.wav", mediaType: "audio/wav" }, segments: false, ...extra };
}

/** The error's every text a caller or the log could see. */
function errorText(error: UpstreamHttpError): string {
  return [error.message, error.body, error.vendorBody ?? "", JSON.stringify(error.request ?? {})].join("\n");
}

function envelopeOf(error: UpstreamHttpError): { message: string; type: string; param: string | null; code: string | null } {
  return JSON.parse(error.body).error;
}

test("registry: openai adds transcription and speech; deepgram transcribes; elevenlabs speaks", (t) => {
  t.deepEqual(providerTypes.get("openai")!.capabilities, ["chat", "embeddings", "image", "transcription", "speech", "video"]);
  t.deepEqual(providerTypes.get("deepgram")!.capabilities, ["transcription"]);
  t.deepEqual(providerTypes.get("elevenlabs")!.capabilities, ["speech"]);
  const deepgramProvider = providerOf("deepgram", "https://api.deepgram.com");
  t.is(deepgramProvider.type, "deepgram");
  t.is(typeof deepgramProvider.transcription!.transcribe, "function");
  t.is(deepgramProvider.speech, undefined);
  t.is(deepgramProvider.chat, undefined);
  const elevenlabsProvider = providerOf("elevenlabs", "https://api.elevenlabs.io");
  t.is(typeof elevenlabsProvider.speech!.synthesize, "function");
  t.is(elevenlabsProvider.transcription, undefined);
});

test("catalog: the ElevenLabs models say their speed range", (t) => {
  for (const input of DEFAULT_SPEECH_MODEL_INPUTS.filter((model) => model.provider === "elevenlabs")) {
    t.deepEqual(speechModelSchema.parse(input).constraints.speed, { min: 0.7, max: 1.2 });
  }
});

// ---- OpenAI transcription ----

test("openai transcription: json without segments, the file with its name and type, the Bearer key", async (t) => {
  const { fake, transcription } = await openai(t);
  const request = await wavRequest("whisper-1", { language: "en" });
  const transcript = await transcription.transcribe(request, options());
  const sent = fake.requests[0]!;
  t.is(sent.path, "/v1/audio/transcriptions");
  t.is(sent.headers.authorization, `Bearer ${KEY}`);
  t.true(String(sent.headers["content-type"]).startsWith("multipart/form-data; boundary="));
  t.deepEqual(sent.fields, { model: ["whisper-1"], language: ["en"], response_format: ["json"] });
  t.deepEqual(sent.file, { field: "file", filename: "clip.wav", contentType: "audio/wav", size: request.audio.bytes.length });
  t.deepEqual(transcript, { text: "The beach was busy. People were swimming.", upstreamRequestId: "req_audio_1" });
});

test("openai transcription: segments asked as verbose_json with segment timestamps, texts trimmed, no speakers", async (t) => {
  const { fake, transcription } = await openai(t);
  fake.set({
    segments: [
      { start: 0, end: 1.25, text: " First words." },
      { start: 1.25, end: 2, text: " Then more. " },
    ],
  });
  const transcript = await transcription.transcribe(await wavRequest("whisper-1", { segments: true }), options());
  t.deepEqual(fake.requests[0]!.fields, { model: ["whisper-1"], response_format: ["verbose_json"], "timestamp_granularities[]": ["segment"] });
  t.is(transcript.text, "First words. Then more.");
  t.is(transcript.language, "english");
  t.is(transcript.durationSeconds, 2);
  t.deepEqual(transcript.segments, [
    { start: 0, end: 1.25, text: "First words." },
    { start: 1.25, end: 2, text: "Then more." },
  ]);
  for (const segment of transcript.segments!) t.false("speaker" in segment);
});

test("openai transcription: a self-hosted server without a key gets no Authorization header; a base URL's trailing slash is fine", async (t) => {
  const fake = await startFakeOpenAIAudio();
  t.teardown(() => fake.close());
  const provider = providerOf("openai", `${fake.url}/`, null);
  const transcript = await provider.transcription!.transcribe(await wavRequest("whisper-1"), options());
  t.is(fake.requests[0]!.headers.authorization, undefined);
  t.is(fake.requests[0]!.path, "/v1/audio/transcriptions");
  t.is(transcript.text, "The beach was busy. People were swimming.");
});

test("openai transcription: gpt-4o-transcribe takes json; asked for segments, OpenAI's 400 comes back as it is", async (t) => {
  const { fake, transcription } = await openai(t);
  const plain = await transcription.transcribe(await wavRequest("gpt-4o-transcribe"), options());
  t.is(plain.text, "The beach was busy. People were swimming.");
  const error = await t.throwsAsync(transcription.transcribe(await wavRequest("gpt-4o-transcribe", { segments: true }), options()), {
    instanceOf: UpstreamHttpError,
  });
  t.is(error.status, 400);
  t.deepEqual(envelopeOf(error), {
    message: "response_format 'verbose_json' is not compatible with model 'gpt-4o-transcribe'. Use 'json' or 'text'.",
    type: "invalid_request_error",
    param: "response_format",
    code: "unsupported_value",
  });
  t.is(fake.requests.length, 2);
});

test("openai transcription: a wrong key is a 401 in OpenAI's envelope, and the key is nowhere in the error", async (t) => {
  const { transcription } = await openai(t, { apiKey: "sk-the-real-one-9876543210" });
  const error = await t.throwsAsync(transcription.transcribe(await wavRequest("whisper-1"), options()), { instanceOf: UpstreamHttpError });
  t.is(error.status, 401);
  t.is(envelopeOf(error).code, "invalid_api_key");
  t.false(errorText(error).includes(KEY));
});

test("openai transcription: an error echoing the key is redacted; a body that is no envelope gets one with the status", async (t) => {
  const { fake, transcription } = await openai(t);
  fake.enqueue(
    { status: 400, errorBody: { error: { message: `Invalid header value: Bearer ${KEY}`, type: "invalid_request_error", param: null, code: null } } },
    { status: 502, errorBody: "<html>Bad Gateway</html>" },
  );
  const echoed = await t.throwsAsync(transcription.transcribe(await wavRequest("whisper-1"), options()), { instanceOf: UpstreamHttpError });
  t.is(echoed.status, 400);
  t.false(errorText(echoed).includes(KEY));
  t.is(envelopeOf(echoed).message, "Invalid header value: Bearer [REDACTED]");
  const proxy = await t.throwsAsync(transcription.transcribe(await wavRequest("whisper-1"), options()), { instanceOf: UpstreamHttpError });
  t.is(proxy.status, 502);
  t.is(envelopeOf(proxy).type, "server_error");
  t.is(proxy.vendorBody, "<html>Bad Gateway</html>");
});

test("openai transcription: a malformed 200 is an invalid response naming the provider", async (t) => {
  const { fake, transcription } = await openai(t);
  fake.enqueue({ malformed: true }, { malformed: "not json at all" });
  const noText = await t.throwsAsync(transcription.transcribe(await wavRequest("whisper-1"), options()), { instanceOf: UpstreamNetworkError });
  t.is(noText.failure, "invalid_response");
  t.is(noText.provider, "openai");
  const notJson = await t.throwsAsync(transcription.transcribe(await wavRequest("whisper-1"), options()), { instanceOf: UpstreamNetworkError });
  t.is(notJson.failure, "invalid_response");
});

test("openai transcription: verbose_json without segments leaves them out rather than inventing them", async (t) => {
  const { fake, transcription } = await openai(t);
  fake.set({ omitSegments: true });
  const transcript = await transcription.transcribe(await wavRequest("whisper-1", { segments: true }), options());
  t.is(transcript.segments, undefined);
  t.is(transcript.durationSeconds, 2);
});

// ---- OpenAI speech ----

const CODECS: Record<Exclude<SpeechFormat, "pcm">, string> = { mp3: "mp3", wav: "pcm_s16le", opus: "opus", flac: "flac" };

test("openai speech: every format asked as it is and answered in it, real audio, the request id kept", async (t) => {
  const { fake, speech } = await openai(t);
  const input = "Hello from the fake speaker."; // 28 characters: 1.68 s
  for (const [index, format] of (["mp3", "wav", "opus", "flac", "pcm"] as const).entries()) {
    const audio = await speech.synthesize({ model: "tts-1", input, voice: "nova", speed: 1, format }, options());
    const sent = fake.requests[index]!;
    t.is(sent.path, "/v1/audio/speech");
    t.is(sent.headers.authorization, `Bearer ${KEY}`);
    t.is(sent.headers["content-type"], "application/json");
    t.deepEqual(sent.json, { model: "tts-1", input, voice: "nova", response_format: format, speed: 1 });
    t.is(audio.format, format);
    t.is(audio.upstreamRequestId, `req_audio_${index + 1}`);
    if (format === "pcm") {
      t.is(audio.sampleRate, 24_000);
      t.is(audio.bytes.length, 1.68 * 48_000);
    } else {
      t.is(audio.sampleRate, undefined);
      t.is((await probeAudio(audio.bytes))?.codec, CODECS[format]);
    }
  }
});

test("openai speech: voices by model, named and language-free; a voice OpenAI lacks is its 400", async (t) => {
  const { speech } = await openai(t);
  const tts1 = await speech.voices("tts-1", options());
  t.deepEqual(
    tts1.map((voice) => voice.id),
    ["alloy", "ash", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer"],
  );
  t.deepEqual(tts1[0], { id: "alloy", name: "Alloy", languages: [] });
  t.deepEqual(
    (await speech.voices("tts-1-hd", options())).map((voice) => voice.id),
    tts1.map((voice) => voice.id),
  );
  const gpt = await speech.voices("gpt-4o-mini-tts", options());
  t.is(gpt.length, 13);
  t.deepEqual(
    gpt.slice(9).map((voice) => voice.name),
    ["Ballad", "Verse", "Marin", "Cedar"],
  );
  const error = await t.throwsAsync(speech.synthesize({ model: "tts-1", input: "hi", voice: "marin", speed: 1, format: "mp3" }, options()), {
    instanceOf: UpstreamHttpError,
  });
  t.is(error.status, 400);
  t.is(envelopeOf(error).param, "voice");
});

test("openai speech: input over 4096 characters is OpenAI's 400; a JSON 200 is no audio", async (t) => {
  const { fake, speech } = await openai(t);
  const long = await t.throwsAsync(speech.synthesize({ model: "tts-1", input: "a".repeat(4097), voice: "alloy", speed: 1, format: "mp3" }, options()), {
    instanceOf: UpstreamHttpError,
  });
  t.is(long.status, 400);
  t.is(envelopeOf(long).code, "string_too_long");
  fake.enqueue({ malformed: true });
  const malformed = await t.throwsAsync(speech.synthesize({ model: "tts-1", input: "hi", voice: "alloy", speed: 1, format: "mp3" }, options()), {
    instanceOf: UpstreamNetworkError,
  });
  t.is(malformed.failure, "invalid_response");
});

// ---- Deepgram ----

test("deepgram: the audio's bytes with its type, the Token key, every option in the query; speakers from utterances, 0 kept", async (t) => {
  const { fake, transcription } = await deepgram(t);
  const request = await wavRequest("nova-3", { segments: true });
  const transcript = await transcription.transcribe(request, options());
  const sent = fake.requests[0]!;
  t.is(sent.path, "/v1/listen");
  t.is(sent.headers.authorization, `Token ${KEY}`);
  t.is(sent.contentType, "audio/wav");
  t.is(sent.bodyBytes, request.audio.bytes.length);
  t.deepEqual(sent.query, { model: "nova-3", smart_format: "true", punctuate: "true", diarize: "true", utterances: "true", detect_language: "true" });
  t.is(transcript.text, "Hello there, how are you? I am fine, thanks.");
  t.is(transcript.language, "en");
  t.is(transcript.durationSeconds, 2);
  t.regex(transcript.upstreamRequestId ?? "", /^[0-9a-f-]{36}$/);
  t.deepEqual(transcript.segments, [
    { start: 0.08, end: 1.4, text: "Hello there, how are you?", speaker: 0 },
    { start: 2.6, end: 3.6, text: "I am fine, thanks.", speaker: 1 },
  ]);
});

test("deepgram: a language hint replaces detection and names the transcript's language; no segments unless asked", async (t) => {
  const { fake, transcription } = await deepgram(t);
  fake.set({ requestId: "dg-req-42" });
  const transcript = await transcription.transcribe(await wavRequest("nova-2", { language: "de" }), options());
  t.deepEqual(fake.requests[0]!.query, { model: "nova-2", smart_format: "true", punctuate: "true", diarize: "true", utterances: "true", language: "de" });
  t.is(transcript.language, "de");
  t.is(transcript.upstreamRequestId, "dg-req-42");
  t.is(transcript.segments, undefined);
});

test("deepgram: words without speaker labels make segments without a speaker", async (t) => {
  const { fake, transcription } = await deepgram(t);
  fake.set({ words: DEEPGRAM_WORDS.map(({ speaker: _speaker, ...word }) => word) });
  const transcript = await transcription.transcribe(await wavRequest("nova-3", { segments: true }), options());
  t.is(transcript.segments!.length, 2);
  for (const segment of transcript.segments!) t.false("speaker" in segment);
});

test("deepgram: without utterances, segments are rebuilt from the words by speaker, sentence and pause", async (t) => {
  const { fake, transcription } = await deepgram(t);
  fake.set({ omitUtterances: true });
  const transcript = await transcription.transcribe(await wavRequest("nova-3", { segments: true }), options());
  t.deepEqual(transcript.segments, [
    { start: 0.08, end: 1.4, text: "Hello there, how are you?", speaker: 0 },
    { start: 2.6, end: 3.6, text: "I am fine, thanks.", speaker: 1 },
  ]);
});

test("deepgram: segmentsFromWords breaks at a speaker change, a sentence end and a pause over a second", (t) => {
  t.deepEqual(
    segmentsFromWords([
      { start: 0, end: 0.3, text: "One", speaker: 0 },
      { start: 0.35, end: 0.6, text: "two.", speaker: 0 },
      { start: 0.7, end: 0.9, text: "Three", speaker: 0 },
      { start: 2.5, end: 2.8, text: "four", speaker: 0 },
      { start: 2.9, end: 3.1, text: "five", speaker: 1 },
      { start: 3.2, end: 3.4, text: '"six?"' },
      { start: 3.5, end: 3.7, text: "seven" },
    ]),
    [
      { start: 0, end: 0.6, text: "One two.", speaker: 0 },
      { start: 0.7, end: 0.9, text: "Three", speaker: 0 },
      { start: 2.5, end: 2.8, text: "four", speaker: 0 },
      { start: 2.9, end: 3.1, text: "five", speaker: 1 },
      { start: 3.2, end: 3.4, text: '"six?"' },
      { start: 3.5, end: 3.7, text: "seven" },
    ],
  );
  t.deepEqual(segmentsFromWords([]), []);
});

test("deepgram: both error shapes become OpenAI's envelope with the status and the vendor's message", async (t) => {
  const { fake, transcription } = await deepgram(t);
  fake.enqueue({ status: 402 }, { status: 401, errorShape: "category" }, { status: 429, retryAfter: "3" });
  const payment = await t.throwsAsync(transcription.transcribe(await wavRequest("nova-3"), options()), { instanceOf: UpstreamHttpError });
  t.is(payment.status, 402);
  t.deepEqual(envelopeOf(payment), {
    message: "Project does not have enough credits for an API request.",
    type: "insufficient_quota",
    param: null,
    code: "ASR_PAYMENT_REQUIRED",
  });
  t.is(JSON.parse(payment.vendorBody!).err_code, "ASR_PAYMENT_REQUIRED");
  const auth = await t.throwsAsync(transcription.transcribe(await wavRequest("nova-3"), options()), { instanceOf: UpstreamHttpError });
  t.is(auth.status, 401);
  t.deepEqual(envelopeOf(auth), {
    message: "Invalid credentials. The API key in the Authorization header was not recognised.",
    type: "authentication_error",
    param: null,
    code: "INVALID_AUTH",
  });
  const limited = await t.throwsAsync(transcription.transcribe(await wavRequest("nova-3"), options()), { instanceOf: UpstreamHttpError });
  t.is(limited.status, 429);
  t.is(limited.retryAfterMs, 3000);
  t.is(envelopeOf(limited).type, "rate_limit_error");
});

test("deepgram: a wrong key is its 401; an error echoing the key is redacted; audio it cannot read is its 400", async (t) => {
  const fake = await startFakeDeepgram({ apiKey: "another-key-entirely-000" });
  t.teardown(() => fake.close());
  const transcription = providerOf("deepgram", fake.url).transcription!;
  const wrong = await t.throwsAsync(transcription.transcribe(await wavRequest("nova-3"), options()), { instanceOf: UpstreamHttpError });
  t.is(wrong.status, 401);
  t.is(envelopeOf(wrong).code, "INVALID_AUTH");
  t.false(errorText(wrong).includes(KEY));
  const { fake: echoing, transcription: echoed } = await deepgram(t);
  echoing.enqueue({ status: 400, errorBody: { err_code: "Bad Request", err_msg: `bad token Token ${KEY}`, request_id: "r1" } });
  const redacted = await t.throwsAsync(echoed.transcribe(await wavRequest("nova-3"), options()), { instanceOf: UpstreamHttpError });
  t.false(errorText(redacted).includes(KEY));
  t.is(envelopeOf(redacted).message, "bad token Token [REDACTED]");
  const junk = await t.throwsAsync(
    echoed.transcribe({ model: "nova-3", audio: { bytes: Buffer.from("not audio"), filename: "x.wav", mediaType: "audio/wav" }, segments: false }, options()),
    { instanceOf: UpstreamHttpError },
  );
  t.is(junk.status, 400);
  t.regex(envelopeOf(junk).message, /corrupt or unsupported data/);
});

test("deepgram: a 200 without results is an invalid response", async (t) => {
  const { fake, transcription } = await deepgram(t);
  fake.enqueue({ malformed: true });
  const error = await t.throwsAsync(transcription.transcribe(await wavRequest("nova-3"), options()), { instanceOf: UpstreamNetworkError });
  t.is(error.failure, "invalid_response");
  t.is(error.provider, "deepgram");
});

// ---- ElevenLabs ----

test("elevenlabs speech: the voice in the path, output_format in the query, xi-api-key, speed in voice_settings", async (t) => {
  const { fake, speech } = await elevenlabs(t);
  const audio = await speech.synthesize(
    { model: "eleven_multilingual_v2", input: "Hello there.", voice: RACHEL_VOICE_ID, speed: 1.1, format: "mp3" },
    options(),
  );
  const sent = fake.requests[0]!;
  t.is(sent.method, "POST");
  t.is(sent.path, `/v1/text-to-speech/${RACHEL_VOICE_ID}`);
  t.deepEqual(sent.query, { output_format: "mp3_44100_128" });
  t.is(sent.headers["xi-api-key"], KEY);
  t.is(sent.headers.authorization, undefined);
  t.deepEqual(sent.json, { text: "Hello there.", model_id: "eleven_multilingual_v2", voice_settings: { speed: 1.1 } });
  t.is(audio.format, "mp3");
  t.is(audio.upstreamRequestId, "el_req_1");
  const probed = await probeAudio(audio.bytes);
  t.is(probed?.codec, "mp3");
  t.is(probed?.sampleRate, 44_100);
});

test("elevenlabs speech: pcm at 24 kHz, wav as wav, opus and flac asked as mp3 for the gateway to convert", async (t) => {
  const { fake, speech } = await elevenlabs(t);
  const say = (format: SpeechFormat) =>
    speech.synthesize({ model: "eleven_flash_v2_5", input: "Twenty characters ok", voice: RACHEL_VOICE_ID, speed: 1, format }, options());
  const pcm = await say("pcm");
  t.is(pcm.format, "pcm");
  t.is(pcm.sampleRate, 24_000);
  t.is(pcm.bytes.length, 1.2 * 48_000);
  const wav = await say("wav");
  t.is(wav.format, "wav");
  t.like(await probeAudio(wav.bytes), { codec: "pcm_s16le", container: "wav", sampleRate: 44_100 });
  for (const format of ["opus", "flac"] as const) {
    const audio = await say(format);
    t.is(audio.format, "mp3");
    t.is((await probeAudio(audio.bytes))?.codec, "mp3");
  }
  t.deepEqual(
    fake.requests.map((request) => request.query.output_format),
    ["pcm_24000", "wav_44100", "mp3_44100_128", "mp3_44100_128"],
  );
});

test("elevenlabs speech: a speed outside 0.7-1.2 is refused before any call; the ends are fine", async (t) => {
  const { fake, speech } = await elevenlabs(t);
  for (const speed of [0.5, 1.25, 4]) {
    const error = await t.throwsAsync(
      speech.synthesize({ model: "eleven_multilingual_v2", input: "hi", voice: RACHEL_VOICE_ID, speed, format: "mp3" }, options()),
      {
        instanceOf: UnsupportedContentError,
      },
    );
    t.is(error.param, "speed");
    t.regex(error.message, /0\.7 to 1\.2/);
  }
  t.is(fake.requests.length, 0);
  for (const speed of [0.7, 1.2])
    await speech.synthesize({ model: "eleven_multilingual_v2", input: "hi", voice: RACHEL_VOICE_ID, speed, format: "mp3" }, options());
  t.is(fake.requests.length, 2);
});

test("elevenlabs speech: a voice id is escaped into the path; an unknown voice is ElevenLabs' 404 in OpenAI's envelope", async (t) => {
  const { fake, speech } = await elevenlabs(t);
  const error = await t.throwsAsync(
    speech.synthesize({ model: "eleven_multilingual_v2", input: "hi", voice: "no such/voice", speed: 1, format: "mp3" }, options()),
    {
      instanceOf: UpstreamHttpError,
    },
  );
  t.is(fake.requests[0]!.path, "/v1/text-to-speech/no%20such%2Fvoice");
  t.is(error.status, 404);
  t.deepEqual(envelopeOf(error), {
    message: "A voice with voice_id no such/voice was not found.",
    type: "invalid_request_error",
    param: null,
    code: "voice_not_found",
  });
  t.is(JSON.parse(error.vendorBody!).detail.status, "voice_not_found");
});

test("elevenlabs: FastAPI's 422 keeps its status with the field as param; a wrong or echoed key never shows", async (t) => {
  const { fake, speech } = await elevenlabs(t);
  fake.enqueue({ status: 422 }, { status: 401, errorBody: { detail: { status: "invalid_api_key", message: `Invalid API key: ${KEY}` } } });
  const validation = await t.throwsAsync(
    speech.synthesize({ model: "eleven_multilingual_v2", input: "hi", voice: RACHEL_VOICE_ID, speed: 1, format: "mp3" }, options()),
    {
      instanceOf: UpstreamHttpError,
    },
  );
  t.is(validation.status, 422);
  t.deepEqual(envelopeOf(validation), { message: "text: field required", type: "invalid_request_error", param: "text", code: "value_error.missing" });
  const echoed = await t.throwsAsync(
    speech.synthesize({ model: "eleven_multilingual_v2", input: "hi", voice: RACHEL_VOICE_ID, speed: 1, format: "mp3" }, options()),
    {
      instanceOf: UpstreamHttpError,
    },
  );
  t.is(echoed.status, 401);
  t.is(envelopeOf(echoed).code, "invalid_api_key");
  t.false(errorText(echoed).includes(KEY));
  const other = await startFakeElevenLabs({ apiKey: "the-other-key-1234567" });
  t.teardown(() => other.close());
  const wrong = await t.throwsAsync(providerOf("elevenlabs", other.url).speech!.voices("eleven_multilingual_v2", options()), { instanceOf: UpstreamHttpError });
  t.is(wrong.status, 401);
  t.is(envelopeOf(wrong).message, "Invalid API key");
});

test("elevenlabs speech: a JSON 200 is no audio", async (t) => {
  const { fake, speech } = await elevenlabs(t);
  fake.enqueue({ malformed: true });
  const error = await t.throwsAsync(
    speech.synthesize({ model: "eleven_multilingual_v2", input: "hi", voice: RACHEL_VOICE_ID, speed: 1, format: "mp3" }, options()),
    {
      instanceOf: UpstreamNetworkError,
    },
  );
  t.is(error.failure, "invalid_response");
});

test("elevenlabs voices: the account's voices with their languages, read once for every model", async (t) => {
  const { fake, speech } = await elevenlabs(t);
  const voices = await speech.voices("eleven_multilingual_v2", options());
  t.deepEqual(voices, [
    { id: RACHEL_VOICE_ID, name: "Rachel", languages: ["en"] },
    { id: "pNInz6obpgDQGcFmaJgB", name: "Adam", languages: [] },
    { id: "XB0fDUnXU5powFXDhCwa", name: "Charlotte", languages: ["sv", "en"] },
  ]);
  t.deepEqual(await speech.voices("eleven_flash_v2_5", options()), voices);
  t.is(fake.requests.length, 1);
  t.is(fake.requests[0]!.method, "GET");
  t.is(fake.requests[0]!.path, "/v1/voices");
  t.is(fake.requests[0]!.headers["xi-api-key"], KEY);
});

test("elevenlabs voices: a failed read is not kept; the list is read again after five minutes", async (t) => {
  const fake = await startFakeElevenLabs({ apiKey: KEY });
  t.teardown(() => fake.close());
  const context = contextOf("elevenlabs", fake.url, KEY);
  let now = 1_000_000;
  const voices = createElevenLabsVoices(context, elevenLabsRequest(context), { now: () => now });
  fake.enqueue({ status: 503 }, { malformed: true });
  t.is((await t.throwsAsync(voices(options().signal), { instanceOf: UpstreamHttpError })).status, 503);
  t.is((await t.throwsAsync(voices(options().signal), { instanceOf: UpstreamNetworkError })).failure, "invalid_response");
  t.is((await voices(options().signal)).length, 3);
  fake.set({ voices: [{ voice_id: "new-voice", name: "New" }] });
  now += 5 * 60_000 - 1;
  t.is((await voices(options().signal)).length, 3);
  now += 1;
  t.deepEqual(await voices(options().signal), [{ id: "new-voice", name: "New", languages: [] }]);
  t.is(fake.requests.length, 4);
});
