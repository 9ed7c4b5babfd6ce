// Hostile audio on POST /v1/audio/transcriptions: things that are not audio under an audio name
// (a picture, text, an HLS playlist, an ffconcat list that would make ffmpeg fetch other
// resources, an empty file), a WAV whose header lies about its length, a truncated mp3, and
// audio over the model's length or size. Each refusal comes before any upstream call and any
// usage row; audio that is accepted is billed by what is really there.
import { createServer, type Server } from "node:net";
import test from "ava";
import sharp from "sharp";
import { DEFAULT_TRANSCRIPTION_MODEL_INPUTS } from "../../src/config/default-audio-models.js";
import { homePaths } from "../../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../../src/store/usage-log.js";
import { fakeAudio } from "../fakes/audio-files.js";
import { type FakeOpenAIAudio, startFakeOpenAIAudio } from "../fakes/openai-audio.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "../helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "../helpers/picture-hosts.js";

const WHISPER = DEFAULT_TRANSCRIPTION_MODEL_INPUTS.find((model) => model.id === "openai/whisper-1")!;
const SHORT = "openai/whisper-1-short";
const SMALL = "openai/whisper-1-small";
const SMALL_BYTES = 50_000;

let openai: FakeOpenAIAudio;
let hosts: PictureHosts;
let gateway: TestGateway;
let key: string;
/** A TCP server a playlist points at: it must never be connected to. */
let trap: Server;
let trapPort: number;
let trapConnections = 0;

test.before(async () => {
  openai = await startFakeOpenAIAudio({ apiKey: "sk-test" });
  hosts = await startPictureHosts();
  trap = createServer((socket) => {
    trapConnections += 1;
    socket.destroy();
  });
  trapPort = await new Promise<number>((resolve) => trap.listen(0, "127.0.0.1", () => resolve((trap.address() as { port: number }).port)));
  const home = await makeHome((config) => {
    config.upstream = { retries: 0, retryBaseDelayMs: 1, breakerFailureThreshold: 0 };
    config.providers = { openai: { type: "openai", baseUrl: openai.url, apiKey: "sk-test" } };
    // catalog.transcription replaces the whole list: whisper-1 as built in, plus two copies with smaller caps.
    config.catalog = {
      transcription: [
        WHISPER,
        { ...WHISPER, id: SHORT, constraints: { ...WHISPER.constraints, maxDurationSeconds: 2 } },
        { ...WHISPER, id: SMALL, constraints: { ...WHISPER.constraints, maxBytes: SMALL_BYTES } },
      ],
    };
    config.tools.transcription = { default: "openai/whisper-1", allow: ["openai/whisper-1", SHORT, SMALL] };
  });
  key = await addKey(home, "hostile", "pro");
  gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
});

test.after.always(async () => {
  await gateway?.shutdown();
  await hosts?.close();
  await openai?.close();
  await new Promise((done) => trap?.close(done));
});

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function upload(bytes: Buffer, name: string, fields: Record<string, string> = {}, type = "audio/mpeg"): Promise<Answer> {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(bytes)], { type }), name);
  for (const [field, value] of Object.entries(fields)) form.append(field, value);
  const response = await fetch(`${gateway.url}/v1/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

async function postJson(body: Record<string, unknown>): Promise<Answer> {
  const response = await fetch(`${gateway.url}/v1/audio/transcriptions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

function rows(): UsageRow[] {
  return UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "audio.transcriptions");
}

/** The call is refused with this status and code, and nothing went upstream or was billed. */
async function refusedBeforeUpstream(
  t: { is: (actual: unknown, expected: unknown, message?: string) => void },
  call: () => Promise<Answer>,
  status: number,
  code: string,
  param: string,
): Promise<Answer> {
  const calls = openai.requests.length;
  const billed = rows().length;
  const answer = await call();
  t.is(answer.status, status, JSON.stringify(answer.body));
  t.is(answer.body.error?.code, code);
  t.is(answer.body.error?.param, param);
  t.is(openai.requests.length, calls, "nothing sent upstream");
  t.is(rows().length, billed, "no usage row");
  return answer;
}

const playlist = () => `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nhttp://127.0.0.1:${trapPort}/seg.ts\n#EXT-X-ENDLIST\n`;

test.serial("a PNG named x.mp3 is 400 invalid_audio", async (t) => {
  const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: "#336699" } })
    .png()
    .toBuffer();
  const answer = await refusedBeforeUpstream(t, () => upload(png, "x.mp3"), 400, "invalid_audio", "file");
  t.regex(answer.body.error.message, /not audio .*image\/png/);
});

test.serial("plain text named .mp3 is 400 invalid_audio", async (t) => {
  await refusedBeforeUpstream(t, () => upload(Buffer.from("This is not a song, only a few words of text.\n"), "song.mp3"), 400, "invalid_audio", "file");
});

test.serial("an HLS playlist named .mp3 is 400 invalid_audio and the segment's server is never connected to", async (t) => {
  await refusedBeforeUpstream(t, () => upload(Buffer.from(playlist()), "stream.mp3"), 400, "invalid_audio", "file");
  // Behind an ID3 tag file-type takes it for mp3: ffprobe then reads it with the mp3 demuxer and the file protocol only.
  const id3 = Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]), Buffer.from(playlist())]);
  await refusedBeforeUpstream(t, () => upload(id3, "stream.mp3"), 400, "invalid_audio", "file");
  await refusedBeforeUpstream(t, () => postJson({ mediaBase64: Buffer.from(playlist()).toString("base64") }), 400, "invalid_audio", "mediaBase64");
  // Proving a connection does NOT come: ffprobe was done before each answer; a short pause lets a
  // connection it opened be accepted and counted.
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.is(trapConnections, 0);
});

test.serial("an ffconcat list named .mp3 is 400 invalid_audio, nothing fetched", async (t) => {
  const list = `ffconcat version 1.0\nfile 'http://127.0.0.1:${trapPort}/a.mp3'\nfile '/etc/passwd'\n`;
  await refusedBeforeUpstream(t, () => upload(Buffer.from(list), "list.mp3"), 400, "invalid_audio", "file");
  t.is(trapConnections, 0);
});

test.serial("an empty file is 400 invalid_audio", async (t) => {
  const answer = await refusedBeforeUpstream(t, () => upload(Buffer.alloc(0), "empty.mp3"), 400, "invalid_audio", "file");
  t.regex(answer.body.error.message, /empty/);
});

test.serial("base64 that is not base64 is 400 invalid_audio naming mediaBase64", async (t) => {
  await refusedBeforeUpstream(t, () => postJson({ mediaBase64: "this is not base64!" }), 400, "invalid_audio", "mediaBase64");
  await refusedBeforeUpstream(t, () => postJson({ mediaBase64: "data:audio/mpeg;base64,@@@@" }), 400, "invalid_audio", "mediaBase64");
});

test.serial("a WAV whose header claims hours is measured by its packets: 2 s, billed 2 s", async (t) => {
  const wav = Buffer.from(await fakeAudio({ codec: "wav", durationSeconds: 2, sampleRate: 16_000 }));
  const data = wav.indexOf("data", 12);
  t.true(data > 0);
  // RIFF and data sizes near 4 GiB: at 32 000 bytes a second, about 37 hours.
  wav.writeUInt32LE(0xfffffff0, 4);
  wav.writeUInt32LE(0xffffffe0, data + 4);
  const calls = openai.requests.length;
  const answer = await upload(wav, "long.wav", { response_format: "verbose_json" }, "audio/wav");
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.is(answer.headers.get("x-service-audio-duration-ms"), "2000");
  t.is(answer.body.duration, 2);
  t.is(openai.requests.length, calls + 1);
  const row = rows().at(-1)!;
  t.is(row.units.seconds, 2);
  t.is(row.credits, 200);
});

test.serial("a WAV whose data chunk claims less than it holds: only the measured audio goes upstream, and that is what is billed", async (t) => {
  const wav = Buffer.from(await fakeAudio({ codec: "wav", durationSeconds: 4, sampleRate: 16_000 }));
  const data = wav.indexOf("data", 12);
  // Half a second of 16-bit mono at 16 kHz declared; four seconds follow.
  wav.writeUInt32LE(16_000, data + 4);
  const answer = await upload(wav, "short-claim.wav", {}, "audio/wav");
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.is(answer.headers.get("x-service-audio-duration-ms"), "500");
  t.is(openai.requests.at(-1)!.file!.size, data + 8 + 16_000, "the unmeasured samples after the data chunk are not sent");
  t.is(rows().at(-1)!.units.seconds, 1);
});

test.serial("a truncated mp3 (40% of 5 s) is billed by what is there, not by its Xing header", async (t) => {
  const mp3 = await fakeAudio({ codec: "mp3", durationSeconds: 5 });
  const cut = mp3.subarray(0, Math.floor(mp3.length * 0.4));
  const answer = await upload(Buffer.from(cut), "cut.mp3");
  t.is(answer.status, 200, JSON.stringify(answer.body));
  const ms = Number(answer.headers.get("x-service-audio-duration-ms"));
  t.true(ms > 1800 && ms < 2200, `${ms} ms`);
  const row = rows().at(-1)!;
  const seconds = Math.ceil(ms / 1000);
  t.is(row.units.seconds, seconds);
  t.true(seconds <= 3);
  t.is(row.credits, Math.ceil((seconds * 6000) / 60));
});

test.serial("audio longer than the model's cap is 400 audio_too_long naming the limit", async (t) => {
  const wav = await fakeAudio({ codec: "wav", durationSeconds: 3, sampleRate: 16_000 });
  const answer = await refusedBeforeUpstream(t, () => upload(wav, "long.wav", { model: SHORT }, "audio/wav"), 400, "audio_too_long", "file");
  t.regex(answer.body.error.message, /3 s long; openai\/whisper-1-short takes at most 2 s/);
  const fits = await fakeAudio({ codec: "wav", durationSeconds: 1.5, sampleRate: 16_000 });
  t.is((await upload(fits, "fits.wav", { model: SHORT }, "audio/wav")).status, 200);
});

test.serial("audio larger than the model's maxBytes is 413 naming the limit, however it comes", async (t) => {
  const wav = await fakeAudio({ codec: "wav", durationSeconds: 2, sampleRate: 16_000 });
  t.true(wav.length > SMALL_BYTES);
  hosts.serve("/big.wav", wav, "audio/wav");
  const calls = [
    () => upload(wav, "big.wav", { model: SMALL }, "audio/wav"),
    () => postJson({ model: SMALL, mediaBase64: wav.toString("base64") }),
    () => postJson({ model: SMALL, mediaBase64: `data:audio/wav;base64,${wav.toString("base64")}` }),
    () => postJson({ model: SMALL, mediaUrl: `${hosts.publicBase}/big.wav` }),
  ];
  const params = ["file", "mediaBase64", "mediaBase64", "mediaUrl"];
  for (const [index, call] of calls.entries()) {
    const answer = await refusedBeforeUpstream(t, call, 413, "payload_too_large", params[index]!);
    t.regex(answer.body.error.message, /larger than the 49 KB this model takes/, params[index]);
  }
  const small = await fakeAudio({ codec: "mp3", durationSeconds: 1, bitrateKbps: 32 });
  t.true(small.length < SMALL_BYTES);
  t.is((await upload(small, "small.mp3", { model: SMALL })).status, 200);
});
