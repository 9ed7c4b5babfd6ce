// POST /v1/audio/speech and /v1/audio/synthesize through a real gateway: real espeak-ng speech in
// every format checked with ffprobe (codec, sample rate, duration against the header), vendor
// speech through the OpenAI and ElevenLabs fakes (conversion where the vendor cannot produce the
// format), every error row with nothing billed, the library copy, the voices and the catalog.
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { probeAudio } from "./fakes/audio-files.js";
import { type FakeElevenLabs, RACHEL_VOICE_ID, startFakeElevenLabs } from "./fakes/elevenlabs.js";
import { type FakeOpenAIAudio, startFakeOpenAIAudio } from "./fakes/openai-audio.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let gateway: TestGateway;
let openai: FakeOpenAIAudio;
let elevenlabs: FakeElevenLabs;
let key: string;

test.before(async () => {
  openai = await startFakeOpenAIAudio({ apiKey: "sk-audio-secret" });
  elevenlabs = await startFakeElevenLabs({ apiKey: "xi-secret-key" });
  const home = await makeHome((config) => {
    config.upstream = { retries: 0, retryBaseDelayMs: 1 };
    config.providers = {
      local: { type: "local" },
      openai: { type: "openai", baseUrl: openai.url, apiKey: "sk-audio-secret" },
      elevenlabs: { type: "elevenlabs", baseUrl: elevenlabs.url, apiKey: "xi-secret-key" },
    };
    config.tools.speech = { default: "local/espeak", allow: ["local/espeak", "openai/tts-1", "openai/tts-1-hd", "elevenlabs/eleven_flash_v2_5"] };
    config.plans = { tiny: { monthlyCredits: 100 } };
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "speaker", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await openai?.close();
  await elevenlabs?.close();
});

function speak(body: unknown, options: { path?: string; apiKey?: string } = {}): Promise<Response> {
  return fetch(`${gateway.url}${options.path ?? "/v1/audio/speech"}`, {
    method: "POST",
    headers: { authorization: `Bearer ${options.apiKey ?? key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

function speechRows(): UsageRow[] {
  return UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "audio.speech");
}

const EXPECTED: Record<string, { contentType: string; codec: string; sampleRate?: number }> = {
  mp3: { contentType: "audio/mpeg", codec: "mp3" },
  wav: { contentType: "audio/wav", codec: "pcm_s16le" },
  opus: { contentType: "audio/ogg; codecs=opus", codec: "opus", sampleRate: 48_000 },
  flac: { contentType: "audio/flac", codec: "flac" },
};

for (const format of ["mp3", "wav", "opus", "flac", "pcm"] as const) {
  test.serial(`local espeak speaks ${format}: the bytes are what the headers say, the duration measured within 50 ms`, async (t) => {
    const input = "The quick brown fox jumps over the lazy dog.";
    const response = await speak({ input, format, model: "local/espeak", voice: "en-us" });
    t.is(response.status, 200, await response.clone().text());
    const bytes = Buffer.from(await response.arrayBuffer());
    t.is(response.headers.get("x-service-audio-characters"), String([...input].length));
    t.is(response.headers.get("x-service-audio-format"), format);
    const durationMs = Number(response.headers.get("x-service-audio-duration-ms"));
    t.true(durationMs > 1000, `${durationMs} ms`);
    t.is(Number(response.headers.get("content-length")), bytes.length);
    t.regex(response.headers.get("x-service-asset-id") ?? "", /^file_/);
    if (format === "pcm") {
      t.is(response.headers.get("content-type"), "audio/L16; rate=24000; channels=1");
      // Raw 16-bit mono at 24 kHz: the length is in the byte count.
      t.is(bytes.length % 2, 0);
      t.true(Math.abs((bytes.length / 2 / 24_000) * 1000 - durationMs) <= 50);
      return;
    }
    const expected = EXPECTED[format]!;
    t.is(response.headers.get("content-type"), expected.contentType);
    const probed = await probeAudio(bytes);
    t.truthy(probed, "ffprobe reads the answer");
    t.is(probed!.codec, expected.codec);
    if (expected.sampleRate) t.is(probed!.sampleRate, expected.sampleRate);
    t.is(probed!.channels, 1);
    t.true(Math.abs(probed!.durationSeconds * 1000 - durationMs) <= 50, `header ${durationMs} ms, ffprobe ${probed!.durationSeconds} s`);
  });
}

test.serial("speed changes the length; /v1/audio/synthesize is the same operation; OpenAI's response_format is an alias", async (t) => {
  const input = "Speed makes this sentence shorter or longer.";
  const normal = await speak({ input, format: "wav" });
  const fast = await speak({ input, response_format: "wav", speed: 2 }, { path: "/v1/audio/synthesize" });
  t.is(normal.status, 200);
  t.is(fast.status, 200);
  t.is(fast.headers.get("x-service-audio-format"), "wav");
  const normalMs = Number(normal.headers.get("x-service-audio-duration-ms"));
  const fastMs = Number(fast.headers.get("x-service-audio-duration-ms"));
  t.true(fastMs < normalMs * 0.75, `${fastMs} ms at speed 2, ${normalMs} ms at 1`);
  t.is(normal.headers.get("x-service-audio-model"), "local/espeak");
});

test.serial("the audio is kept in the caller's library with the project and the text", async (t) => {
  const response = await speak({ input: "Keep me.", format: "mp3" });
  const assetId = response.headers.get("x-service-asset-id")!;
  const bytes = Buffer.from(await response.arrayBuffer());
  const file = await fetch(`${gateway.url}/v1/storage/files/${assetId}`, { headers: { authorization: `Bearer ${key}` }, redirect: "follow" });
  t.is(file.status, 200);
  t.deepEqual(Buffer.from(await file.arrayBuffer()), bytes);
  const other = await addKey(gateway.home, "someone-else");
  const hidden = await fetch(`${gateway.url}/v1/storage/files/${assetId}`, { headers: { authorization: `Bearer ${other}` }, redirect: "manual" });
  t.is(hidden.status, 404);
});

test.serial("OpenAI speech: the format and speed go upstream as asked, the trace id comes back, billed per character", async (t) => {
  const before = speechRows().length;
  const input = "Hello from the OpenAI voice.";
  const response = await speak({ input, model: "tts-1", voice: "nova", format: "flac", speed: 1.5 });
  t.is(response.status, 200, await response.clone().text());
  const sent = openai.requests.at(-1)!;
  t.like(sent.json as object, { model: "tts-1", voice: "nova", response_format: "flac", speed: 1.5, input });
  t.regex(response.headers.get("x-service-upstream-trace-id") ?? "", /^req_audio_/);
  const probed = await probeAudio(Buffer.from(await response.arrayBuffer()));
  t.is(probed?.codec, "flac");
  const rows = speechRows();
  t.is(rows.length, before + 1);
  t.like(rows.at(-1)!, { model: "openai/tts-1", provider: "openai", credits: [...input].length * 15 });
  t.is(rows.at(-1)!.units.characters, [...input].length);
});

test.serial("ElevenLabs speech: opus is converted from the vendor's mp3, voices come from the account", async (t) => {
  const response = await speak({ input: "Bonjour et merci.", model: "elevenlabs/eleven_flash_v2_5", voice: RACHEL_VOICE_ID, format: "opus" });
  t.is(response.status, 200, await response.clone().text());
  const sent = elevenlabs.requests.filter((request) => request.method === "POST").at(-1)!;
  t.is(sent.path, `/v1/text-to-speech/${RACHEL_VOICE_ID}`);
  t.is(sent.query?.output_format, "mp3_44100_128");
  const probed = await probeAudio(Buffer.from(await response.arrayBuffer()));
  t.is(probed?.codec, "opus");

  const voices = (await (await fetch(`${gateway.url}/v1/audio/voices?model=elevenlabs/eleven_flash_v2_5`)).json()) as {
    voices: Array<Record<string, unknown>>;
  };
  t.true(voices.voices.some((voice) => voice.id === RACHEL_VOICE_ID && voice.provider === "elevenlabs" && voice.name === "Rachel"));
  const all = (await (await fetch(`${gateway.url}/v1/audio/voices`)).json()) as { voices: Array<{ id: string; provider: string; models: string[] }> };
  t.deepEqual(all.voices.find((voice) => voice.id === "alloy")?.models, ["openai/tts-1", "openai/tts-1-hd"]);
  t.true(all.voices.some((voice) => voice.id === "en-us" && voice.provider === "local"));
});

test.serial("refusals name their limit and bill nothing: too long, unknown voice, another vendor's voice, speed, format, model", async (t) => {
  const rows = speechRows().length;
  const sentBefore = openai.requests.length + elevenlabs.requests.filter((request) => request.method === "POST").length;
  const cases: Array<[Record<string, unknown>, number, string, RegExp]> = [
    [{ input: "x".repeat(4097) }, 400, "input_too_long", /4097 characters; local\/espeak takes at most 4096/],
    [{ input: "hi", voice: "alloy" }, 400, "invalid_voice", /`alloy` is not a voice of local\/espeak \(provider local\)/],
    [{ input: "hi", model: "openai/tts-1", voice: "en-us" }, 400, "invalid_voice", /not a voice of openai\/tts-1.*alloy/],
    [{ input: "hi", speed: 5 }, 400, "invalid_speed", /from 0.25 to 4/],
    [{ input: "hi", speed: "fast" }, 400, "invalid_speed", /from 0.25 to 4/],
    [{ input: "hi", model: "elevenlabs/eleven_flash_v2_5", voice: RACHEL_VOICE_ID, speed: 2 }, 400, "invalid_speed", /from 0.7 to 1.2 for elevenlabs/],
    [{ input: "hi", format: "aac" }, 400, "invalid_parameter", /format/],
    [{ input: "hi", format: "mp3", response_format: "wav" }, 400, "invalid_parameter", /name different formats/],
    [{ input: "" }, 400, "invalid_parameter", /input/],
    [{ voice: "en-us" }, 400, "invalid_parameter", /Missing required parameter: 'input'/],
    [{ input: "hi", model: "openai/gpt-4o-mini-tts" }, 400, "model_not_allowed", /not allowed here/],
    [{ input: "hi", colour: "blue" }, 400, "invalid_parameter", /colour/],
  ];
  for (const [body, status, code, message] of cases) {
    const response = await speak(body);
    const answer = (await response.json()) as { error: { code: string; message: string } };
    t.is(response.status, status, JSON.stringify(body));
    t.is(answer.error.code, code, JSON.stringify(body));
    t.regex(answer.error.message, message, JSON.stringify(body));
  }
  t.is(speechRows().length, rows, "nothing billed");
  t.is(openai.requests.length + elevenlabs.requests.filter((request) => request.method === "POST").length, sentBefore, "nothing sent upstream");
});

test.serial("402 before any upstream call when the price cannot be paid; 403 for a free plan on a paid model; 401 without a key", async (t) => {
  const poor = await addKey(gateway.home, "poor", "tiny");
  const sentBefore = openai.requests.length;
  const short = await speak({ input: "This costs fifteen credits a character.", model: "openai/tts-1" }, { apiKey: poor });
  t.is(short.status, 402);
  t.is(((await short.json()) as { error: { code: string } }).error.code, "insufficient_credits");
  t.is(openai.requests.length, sentBefore);
  const free = await addKey(gateway.home, "free-user", "free");
  const upgrade = await speak({ input: "hi", model: "openai/tts-1-hd" }, { apiKey: free });
  t.is(upgrade.status, 403);
  t.is(((await upgrade.json()) as { error: { code: string } }).error.code, "model_requires_upgrade");
  const anonymous = await fetch(`${gateway.url}/v1/audio/speech`, { method: "POST", body: "{}" });
  t.is(anonymous.status, 401);
});

test.serial("a vendor error passes through without the key and bills nothing", async (t) => {
  const rows = speechRows().length;
  openai.enqueue({ status: 500 });
  const failed = await speak({ input: "fail please", model: "openai/tts-1" });
  t.is(failed.status, 502);
  const text = await failed.text();
  t.false(text.includes("sk-audio-secret"));
  t.is(speechRows().length, rows);
});

test.serial("the public catalog lists the speech models on offer with constraints and prices", async (t) => {
  const catalog = (await (await fetch(`${gateway.url}/v1/public/audio-models`)).json()) as {
    speech: Array<{ id: string; constraints: Record<string, unknown>; pricing: Record<string, number>; model?: string }>;
    transcription: unknown[];
    planLimits: Record<string, { speech: string[] }>;
  };
  t.deepEqual(
    catalog.speech.map((model) => model.id),
    ["local/espeak", "openai/tts-1", "openai/tts-1-hd", "elevenlabs/eleven_flash_v2_5"],
  );
  const espeak = catalog.speech[0]!;
  t.like(espeak.constraints, { maxCharacters: 4096, defaultVoice: "en-us", formats: ["mp3", "wav", "opus", "flac", "pcm"] });
  t.deepEqual(espeak.pricing, { perCharacter: 0 });
  t.is(espeak.model, undefined, "the vendor id is the gateway's business");
  t.deepEqual(catalog.transcription, []);
  t.false(catalog.planLimits.free!.speech.includes("openai/tts-1-hd"));
  t.true(catalog.planLimits.pro!.speech.includes("openai/tts-1-hd"));
});
