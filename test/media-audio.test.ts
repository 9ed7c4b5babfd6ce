// The audio media layer on real files and the real ffmpeg / ffprobe: probing what callers upload
// (every accepted container; hostile inputs refused before ffprobe runs or read without leaving
// the file; lengths measured from the packets, not the header), converting between the speech
// formats (checked by ffprobe itself), measuring, and the engine runs' failure paths.
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import test from "ava";
import sharp from "sharp";
import { convertAudio, measureAudio, mediaTypeOfSpeech, SPEECH_MEDIA_TYPES } from "../src/media/audio-convert.js";
import { AudioInputError, probeAudio } from "../src/media/audio-probe.js";
import { AudioEngineError } from "../src/media/audio-process.js";
import { findFfprobe } from "../src/media/engines.js";
import type { SpeechFormat } from "../src/providers/audio-types.js";

// The product's 20 s deadline for reading audio is for clients; on a loaded test machine a probe
// of a few seconds of audio can take longer, and that is slowness, not what these tests check.
const probe = (bytes: Buffer, options: Parameters<typeof probeAudio>[1] = {}) => probeAudio(bytes, { timeoutMs: 300_000, ...options });

const run = promisify(execFile);

// Every temp file the code makes goes under this directory (os.tmpdir() reads TMPDIR), so the
// tests can see that none is left behind. Each test file runs in its own process.
const scratch = mkdtempSync(path.join(os.tmpdir(), "gw-media-audio-test-"));
const engineTemp = path.join(scratch, "engine-tmp");
const fixtures = path.join(scratch, "fixtures");
for (const directory of [engineTemp, fixtures]) mkdirSync(directory);
process.env.TMPDIR = engineTemp;
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));

const SECONDS = 1.5;
const TOLERANCE = 0.05;

async function ffmpeg(args: string[]): Promise<void> {
  await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", ...args]);
}

/** A 1.5 s 440 Hz tone encoded with `codecArgs` into `name`. */
async function tone(name: string, codecArgs: string[], seconds = SECONDS): Promise<Buffer> {
  const file = path.join(fixtures, name);
  await ffmpeg(["-f", "lavfi", "-i", `sine=frequency=440:sample_rate=44100:duration=${seconds}`, ...codecArgs, file]);
  return readFileSync(file);
}

interface Stream {
  codec: string;
  sampleRate: number;
  channels: number;
  duration: number;
}

/** What ffprobe itself says of `bytes` read with `inputArgs`: the stream, and the end of its last packet. */
async function ffprobe(bytes: Buffer, inputArgs: string[]): Promise<Stream> {
  const file = path.join(fixtures, `check-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, bytes);
  try {
    const info = JSON.parse(
      (
        await run("ffprobe", [
          "-v",
          "error",
          ...inputArgs,
          "-select_streams",
          "a:0",
          "-show_entries",
          "stream=codec_name,sample_rate,channels",
          "-of",
          "json",
          file,
        ])
      ).stdout,
    );
    const packets = (
      await run("ffprobe", ["-v", "error", ...inputArgs, "-select_streams", "a:0", "-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", file], {
        maxBuffer: 64 * 1024 * 1024,
      })
    ).stdout
      .trim()
      .split("\n")
      .map((line) => line.split(",").map(Number));
    const [pts, duration] = packets.at(-1)!;
    const stream = info.streams[0];
    return { codec: stream.codec_name, sampleRate: Number(stream.sample_rate), channels: stream.channels, duration: pts! + duration! };
  } finally {
    rmSync(file, { force: true });
  }
}

const fixture = {
  mp3: tone("tone.mp3", ["-c:a", "libmp3lame", "-b:a", "64k"]),
  wav: tone("tone.wav", ["-c:a", "pcm_s16le"]),
  opus: tone("tone.opus", ["-c:a", "libopus", "-b:a", "32k"]),
  flac: tone("tone.flac", ["-c:a", "flac"]),
  m4a: tone("tone.m4a", ["-c:a", "aac", "-b:a", "64k"]),
  longMp3: tone("long.mp3", ["-c:a", "libmp3lame", "-b:a", "64k"], 4),
};

test.afterEach.always("no temp file is left behind", (t) => {
  t.deepEqual(readdirSync(engineTemp), []);
});

// Probing: every accepted container.

const accepted: Array<{ name: keyof typeof fixture; container: string; extension: string; mediaType: string; codec: string; sampleRate: number }> = [
  { name: "mp3", container: "mp3", extension: "mp3", mediaType: "audio/mpeg", codec: "mp3", sampleRate: 44100 },
  { name: "wav", container: "wav", extension: "wav", mediaType: "audio/wav", codec: "pcm_s16le", sampleRate: 44100 },
  { name: "opus", container: "ogg", extension: "ogg", mediaType: "audio/ogg", codec: "opus", sampleRate: 48000 },
  { name: "flac", container: "flac", extension: "flac", mediaType: "audio/flac", codec: "flac", sampleRate: 44100 },
  { name: "m4a", container: "mp4", extension: "m4a", mediaType: "audio/mp4", codec: "aac", sampleRate: 44100 },
];

for (const expected of accepted) {
  test.serial(`probe: ${expected.name} is read with its container, codec, rate, channels and measured length`, async (t) => {
    const probed = await probe(await fixture[expected.name]);
    t.like(probed, { container: expected.container, extension: expected.extension, mediaType: expected.mediaType, codec: expected.codec });
    t.is(probed.sampleRate, expected.sampleRate);
    t.is(probed.channels, 1);
    t.true(Math.abs(probed.durationSeconds - SECONDS) <= TOLERANCE, `measured ${probed.durationSeconds} s`);
  });
}

test.serial("probe: an mp4 video is taken for its audio stream", async (t) => {
  await ffmpeg([
    "-f",
    "lavfi",
    "-i",
    "testsrc=duration=1.5:size=64x64:rate=10",
    "-f",
    "lavfi",
    "-i",
    "sine=duration=1.5",
    "-c:v",
    "libx264",
    "-c:a",
    "aac",
    "-shortest",
    path.join(fixtures, "video.mp4"),
  ]);
  const probed = await probe(readFileSync(path.join(fixtures, "video.mp4")));
  t.like(probed, { container: "mp4", extension: "mp4", codec: "aac", channels: 1 });
  t.true(Math.abs(probed.durationSeconds - SECONDS) <= TOLERANCE);
});

test.serial("probe: an mp4 without an audio stream is no_audio_stream", async (t) => {
  await ffmpeg(["-f", "lavfi", "-i", "testsrc=duration=1:size=64x64:rate=10", "-c:v", "libx264", path.join(fixtures, "silent-video.mp4")]);
  const error = await t.throwsAsync(probe(readFileSync(path.join(fixtures, "silent-video.mp4"))), { instanceOf: AudioInputError });
  t.is(error!.reason, "no_audio_stream");
});

// Probing: hostile and broken inputs.

/** A TCP listener that counts connections: ffprobe must never open one. */
async function connectionCounter(t: { teardown(fn: () => void): void }): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => server.close());
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections };
}

const NO_FFPROBE = { ffprobe: "/nonexistent/ffprobe" };

async function refusedBeforeFfprobe(t: any, bytes: Buffer, pattern: RegExp): Promise<void> {
  // With an ffprobe that does not exist, running it would fail as missing_engine: not_audio shows it never ran.
  const error = await t.throwsAsync(probe(bytes, NO_FFPROBE), { instanceOf: AudioInputError });
  t.is(error!.reason, "not_audio");
  t.regex(error!.message, pattern);
  t.false(error!.message.includes(os.tmpdir()));
}

test.serial("hostile: a PNG is not_audio, refused before ffprobe runs", async (t) => {
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#ff0000" } })
    .png()
    .toBuffer();
  await refusedBeforeFfprobe(t, png, /image\/png/);
});

test.serial("hostile: plain text (named .mp3 by the caller) is not_audio", async (t) => {
  await refusedBeforeFfprobe(t, Buffer.from("This is not an mp3, whatever its name says.\n"), /not audio in a supported format/);
});

test.serial("hostile: empty bytes are not_audio", async (t) => {
  await refusedBeforeFfprobe(t, Buffer.alloc(0), /empty/);
});

test.serial("hostile: an HLS playlist is not_audio, and nothing connects to the address it names", async (t) => {
  const listener = await connectionCounter(t);
  const playlist = `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\nhttp://127.0.0.1:${listener.port}/x.ts\n#EXT-X-ENDLIST\n`;
  await refusedBeforeFfprobe(t, Buffer.from(playlist), /not audio/);
  // And with the real ffprobe too.
  const error = await t.throwsAsync(probe(Buffer.from(playlist)), { instanceOf: AudioInputError });
  t.is(error!.reason, "not_audio");
  t.is(listener.connections(), 0);
});

test.serial("hostile: a playlist behind an ID3 tag sniffs as mp3 but is read by the mp3 demuxer only: no connection", async (t) => {
  const listener = await connectionCounter(t);
  const playlist = Buffer.from(`#EXTM3U\n#EXTINF:10.0,\nhttp://127.0.0.1:${listener.port}/x.ts\n#EXT-X-ENDLIST\n`);
  // An ID3v2 header whose tag size runs past the end of the file: file-type calls that mp3.
  const id3 = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0x00, 0x00, 0x7f, 0x7f]);
  const error = await t.throwsAsync(probe(Buffer.concat([id3, playlist])), { instanceOf: AudioInputError });
  t.true(["no_audio_stream", "unreadable"].includes(error!.reason), error!.reason);
  t.is(listener.connections(), 0);
});

test.serial("hostile: an ffconcat list naming a real audio file is not_audio", async (t) => {
  const list = `ffconcat version 1.0\nfile '${path.join(fixtures, "tone.wav")}'\n`;
  await refusedBeforeFfprobe(t, Buffer.from(list), /not audio/);
  const error = await t.throwsAsync(probe(Buffer.from(list)), { instanceOf: AudioInputError });
  t.is(error!.reason, "not_audio");
});

test.serial("hostile: a WAV whose header claims hours is measured at its real length", async (t) => {
  const wav = Buffer.from(await tone("two-seconds.wav", ["-c:a", "pcm_s16le", "-ar", "16000"], 2));
  const dataAt = wav.indexOf("data");
  // 16 kHz 16-bit mono is 32000 bytes a second: claim 3 hours.
  wav.writeUInt32LE(3 * 3600 * 32000, dataAt + 4);
  wav.writeUInt32LE(3 * 3600 * 32000 + dataAt, 4);
  const probed = await probe(wav);
  t.true(Math.abs(probed.durationSeconds - 2) <= TOLERANCE, `measured ${probed.durationSeconds} s`);
});

test.serial("hostile: a truncated mp3 is measured at what is there", async (t) => {
  const whole = await fixture.longMp3;
  const half = whole.subarray(0, Math.floor(whole.length / 2));
  const probed = await probe(half);
  t.true(probed.durationSeconds > 1.5 && probed.durationSeconds < 2.5, `measured ${probed.durationSeconds} s`);
  // The Xing header ffmpeg wrote still counts the frames of the whole 4 s.
  t.true(Math.abs((probed.headerDurationSeconds ?? 0) - 4) <= TOLERANCE, `header says ${probed.headerDurationSeconds} s`);
});

test.serial("hostile: a WAV header with nothing readable after it is unreadable or has no audio", async (t) => {
  const header = (await fixture.wav).subarray(0, 12);
  const error = await t.throwsAsync(probe(Buffer.concat([header, Buffer.alloc(64, 0xff)])), { instanceOf: AudioInputError });
  t.true(["unreadable", "no_audio_stream"].includes(error!.reason), error!.reason);
  t.false(error!.message.includes(os.tmpdir()));
});

// Probing: the engine's failure paths.

const standIns = path.join(scratch, "bin");
mkdirSync(standIns);

function script(name: string, body: string): string {
  const file = path.join(standIns, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

test.serial("probe: no ffprobe is missing_engine", async (t) => {
  const error = await t.throwsAsync(probe(await fixture.mp3, NO_FFPROBE), { instanceOf: AudioInputError });
  t.is(error!.reason, "missing_engine");
  t.regex(error!.message, /ffprobe is not installed/);
});

test.serial("probe: an ffprobe over the deadline is killed: timeout", async (t) => {
  const error = await t.throwsAsync(probe(await fixture.mp3, { ffprobe: script("slow-ffprobe", "exec sleep 30"), timeoutMs: 300 }), {
    instanceOf: AudioInputError,
  });
  t.is(error!.reason, "timeout");
});

test.serial("probe: an abort kills ffprobe and rejects with the signal's reason", async (t) => {
  const controller = new AbortController();
  const reason = new Error("caller went away");
  const probing = probe(await fixture.mp3, { ffprobe: script("slow-ffprobe-abort", "exec sleep 30"), signal: controller.signal });
  setTimeout(() => controller.abort(reason), 100);
  t.is(await t.throwsAsync(probing), reason);
});

test.serial("probe: an ffprobe failure is unreadable, without its output or a path", async (t) => {
  const error = await t.throwsAsync(probe(await fixture.mp3, { ffprobe: script("failing-ffprobe", "echo '/secret/path: Invalid data' >&2; exit 1") }), {
    instanceOf: AudioInputError,
  });
  t.is(error!.reason, "unreadable");
  t.false(error!.message.includes("/secret/path"));
});

// Conversion: every target format, checked with ffprobe.

const targets: Array<{ to: SpeechFormat; codec: string; sampleRate: number; inputArgs: string[] }> = [
  { to: "mp3", codec: "mp3", sampleRate: 44100, inputArgs: ["-f", "mp3"] },
  { to: "wav", codec: "pcm_s16le", sampleRate: 44100, inputArgs: ["-f", "wav"] },
  { to: "opus", codec: "opus", sampleRate: 48000, inputArgs: ["-f", "ogg"] },
  { to: "flac", codec: "flac", sampleRate: 44100, inputArgs: ["-f", "flac"] },
  { to: "pcm", codec: "pcm_s16le", sampleRate: 24000, inputArgs: ["-f", "s16le", "-ar", "24000", "-ac", "1"] },
];

for (const target of targets) {
  test.serial(`convert: wav -> ${target.to}, and ffprobe agrees on codec, rate, channels and length`, async (t) => {
    const converted = await convertAudio({ bytes: await fixture.wav, format: "wav" }, target.to);
    const stream = await ffprobe(converted, target.inputArgs);
    t.like(stream, { codec: target.codec, sampleRate: target.sampleRate, channels: 1 });
    t.true(Math.abs(stream.duration - SECONDS) <= TOLERANCE, `${target.to}: ${stream.duration} s`);
    if (target.to === "pcm") t.is(converted.length, SECONDS * 24000 * 2);
  });
}

test.serial("convert: the WAV written has true sizes in its header", async (t) => {
  const wav = await convertAudio({ bytes: await fixture.mp3, format: "mp3" }, "wav");
  t.is(wav.toString("latin1", 0, 4), "RIFF");
  t.is(wav.readUInt32LE(4), wav.length - 8);
  const dataAt = wav.indexOf("data");
  t.is(wav.readUInt32LE(dataAt + 4), wav.length - dataAt - 8);
});

test.serial("convert: every input format is read (mp3, opus, flac, pcm at its rate)", async (t) => {
  const pcm = await convertAudio({ bytes: await fixture.wav, format: "wav" }, "pcm");
  const inputs: Array<{ bytes: Buffer; format: SpeechFormat; sampleRate?: number }> = [
    { bytes: await fixture.mp3, format: "mp3" },
    { bytes: await fixture.opus, format: "opus" },
    { bytes: await fixture.flac, format: "flac" },
    { bytes: pcm, format: "pcm" },
    { bytes: pcm, format: "pcm", sampleRate: 12000 },
  ];
  for (const input of inputs) {
    const wav = await convertAudio(input, "wav");
    const stream = await ffprobe(wav, ["-f", "wav"]);
    const expected = input.sampleRate === 12000 ? SECONDS * 2 : SECONDS;
    t.true(Math.abs(stream.duration - expected) <= TOLERANCE, `${input.format}@${input.sampleRate ?? "-"}: ${stream.duration} s`);
  }
});

test.serial("convert: tempo changes the length, also below half speed (chained atempo)", async (t) => {
  for (const tempo of [2, 0.5, 0.3]) {
    const wav = await convertAudio({ bytes: await fixture.wav, format: "wav" }, "wav", { tempo });
    const stream = await ffprobe(wav, ["-f", "wav"]);
    t.true(Math.abs(stream.duration - SECONDS / tempo) <= 0.1, `tempo ${tempo}: ${stream.duration} s`);
  }
});

test.serial("convert: bytes that are not the named format fail as AudioEngineError failed", async (t) => {
  const error = await t.throwsAsync(convertAudio({ bytes: Buffer.from("not audio at all"), format: "mp3" }, "wav"), { instanceOf: AudioEngineError });
  t.is(error!.reason, "failed");
  t.false(error!.message.includes(os.tmpdir()));
});

test.serial("convert: no ffmpeg is missing_engine; a slow one is killed at the deadline", async (t) => {
  const missing = await t.throwsAsync(convertAudio({ bytes: await fixture.wav, format: "wav" }, "mp3", { ffmpeg: "/nonexistent/ffmpeg" }), {
    instanceOf: AudioEngineError,
  });
  t.is(missing!.reason, "missing_engine");
  const slow = await t.throwsAsync(
    convertAudio({ bytes: await fixture.wav, format: "wav" }, "mp3", { ffmpeg: script("slow-ffmpeg", "exec sleep 30"), timeoutMs: 300 }),
    { instanceOf: AudioEngineError },
  );
  t.is(slow!.reason, "timeout");
});

test.serial("convert: output over the limit fails", async (t) => {
  const error = await t.throwsAsync(convertAudio({ bytes: await fixture.wav, format: "wav" }, "wav", { maxOutputBytes: 10_000 }), {
    instanceOf: AudioEngineError,
  });
  t.is(error!.reason, "failed");
});

// Measuring.

test.serial("measure: each speech format's length, codec, rate and channels", async (t) => {
  const pcm = await convertAudio({ bytes: await fixture.wav, format: "wav" }, "pcm");
  const cases: Array<{ bytes: Buffer; format: SpeechFormat; codec: string; sampleRate: number }> = [
    { bytes: await fixture.mp3, format: "mp3", codec: "mp3", sampleRate: 44100 },
    { bytes: await fixture.wav, format: "wav", codec: "pcm_s16le", sampleRate: 44100 },
    { bytes: await fixture.opus, format: "opus", codec: "opus", sampleRate: 48000 },
    { bytes: await fixture.flac, format: "flac", codec: "flac", sampleRate: 44100 },
    { bytes: pcm, format: "pcm", codec: "pcm_s16le", sampleRate: 24000 },
  ];
  for (const expected of cases) {
    const measured = await measureAudio(expected.bytes, expected.format);
    t.like(measured, { codec: expected.codec, sampleRate: expected.sampleRate, channels: 1 }, expected.format);
    t.true(Math.abs(measured.durationMs - SECONDS * 1000) <= TOLERANCE * 1000, `${expected.format}: ${measured.durationMs} ms`);
  }
  t.is((await measureAudio(pcm, "pcm")).durationMs, 1500);
});

test.serial("measure: a WAV header that lies is measured from its data", async (t) => {
  const wav = Buffer.from(await fixture.wav);
  const dataAt = wav.indexOf("data");
  wav.writeUInt32LE(0x7fffffff, dataAt + 4);
  wav.writeUInt32LE(0x7fffffff, 4);
  t.true(Math.abs((await measureAudio(wav, "wav")).durationMs - 1500) <= 50);
});

test.serial("measure: bytes with no audio fail as AudioEngineError", async (t) => {
  await t.throwsAsync(measureAudio(Buffer.from("nothing here"), "flac"), { instanceOf: AudioEngineError });
});

test("findFfprobe: GW_FFPROBE_PATH first, then beside the ffmpeg found, then PATH", async (t) => {
  const standIn = script("ffprobe-stand-in", "echo 'ffprobe version 9.9-test Copyright'");
  t.like(await findFfprobe({ ...process.env, GW_FFPROBE_PATH: standIn }), { path: standIn, version: "9.9-test", source: "GW_FFPROBE_PATH" });
  const beside = script("ffprobe", "echo 'ffprobe version 8.8-beside'");
  script("ffmpeg", "echo 'ffmpeg version 8.8-beside'");
  t.like(await findFfprobe({ PATH: "/usr/bin", GW_FFMPEG_PATH: path.join(standIns, "ffmpeg") }), { path: beside, source: "beside ffmpeg" });
  t.like(await findFfprobe({ PATH: "/usr/bin" }), { path: "/usr/bin/ffprobe", source: "beside ffmpeg" });
  t.is(await findFfprobe({ PATH: standIns.replace("bin", "nothing-here") }), null);
});

test("media types of the speech formats", (t) => {
  t.is(mediaTypeOfSpeech("mp3"), "audio/mpeg");
  t.is(mediaTypeOfSpeech("wav"), "audio/wav");
  t.is(mediaTypeOfSpeech("opus"), "audio/ogg; codecs=opus");
  t.is(mediaTypeOfSpeech("flac"), "audio/flac");
  t.is(mediaTypeOfSpeech("pcm"), "audio/L16; rate=24000; channels=1");
  t.is(Object.keys(SPEECH_MEDIA_TYPES).length, 5);
});
