// The Ken Burns renderer on real photos and the real ffmpeg: clips at several sizes, ratios and
// lengths checked by ffprobe itself (H.264, yuv420p, exact size, length within 0.1 s, the mp4
// index before the media data), pictures ffmpeg would misread (EXIF-rotated, transparent) made
// right first, and the failure paths: abort and deadline kill ffmpeg and leave no file, a missing
// engine, an unreadable photo, an impossible size.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import test from "ava";
import sharp from "sharp";
import { AudioEngineError } from "../src/media/audio-process.js";
import { kenBurnsFrames, kenBurnsTimeoutMs, renderKenBurns } from "../src/media/kenburns.js";
import { eventually } from "./helpers/eventually.js";

const run = promisify(execFile);
const FFPROBE = "/usr/bin/ffprobe";
const FFMPEG = "/usr/bin/ffmpeg";

const scratch = mkdtempSync(path.join(os.tmpdir(), "gw-media-kenburns-test-"));
const engineTemp = path.join(scratch, "engine-tmp");
const clips = path.join(scratch, "clips");
for (const directory of [engineTemp, clips]) mkdirSync(directory);
// The renderer makes no temp files of its own; anything under here would be a leak.
process.env.TMPDIR = engineTemp;
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));

test.afterEach.always("no temp file is left behind", (t) => {
  t.deepEqual(readdirSync(engineTemp), []);
});

let clipCount = 0;
function clipPath(): string {
  clipCount += 1;
  return path.join(clips, `clip-${clipCount}.mp4`);
}

/** A 1600x1000 photo stand-in: colour gradients under a checkerboard, so every frame has detail. */
function pattern(width = 1600, height = 1000): Buffer {
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 3;
      pixels[at] = Math.round((x * 255) / width);
      pixels[at + 1] = Math.round((y * 255) / height);
      pixels[at + 2] = ((x >> 5) + (y >> 5)) % 2 ? 200 : 40;
    }
  }
  return pixels;
}

const raw = { raw: { width: 1600, height: 1000, channels: 3 as const } };
const photo = {
  png: sharp(pattern(), raw).png().toBuffer(),
  jpeg: sharp(pattern(), raw).jpeg({ quality: 85 }).toBuffer(),
};

interface Probed {
  codec: string;
  pixelFormat: string;
  width: number;
  height: number;
  frames: number;
  duration: number;
  audioStreams: number;
}

async function probe(file: string): Promise<Probed> {
  const { stdout } = await run(FFPROBE, [
    "-v",
    "error",
    "-show_entries",
    "stream=codec_type,codec_name,pix_fmt,width,height,nb_frames:format=duration",
    "-of",
    "json",
    file,
  ]);
  const info = JSON.parse(stdout) as {
    streams: Array<{ codec_type: string; codec_name: string; pix_fmt: string; width: number; height: number; nb_frames: string }>;
    format: { duration: string };
  };
  const video = info.streams.find((stream) => stream.codec_type === "video")!;
  return {
    codec: video.codec_name,
    pixelFormat: video.pix_fmt,
    width: video.width,
    height: video.height,
    frames: Number(video.nb_frames),
    duration: Number(info.format.duration),
    audioStreams: info.streams.filter((stream) => stream.codec_type === "audio").length,
  };
}

/** Offsets of the top-level mp4 boxes, walked by their sizes. */
function topLevelBoxes(bytes: Buffer): Array<{ type: string; offset: number }> {
  const boxes: Array<{ type: string; offset: number }> = [];
  let offset = 0;
  while (offset + 8 <= bytes.length) {
    let size = bytes.readUInt32BE(offset);
    const type = bytes.toString("latin1", offset + 4, offset + 8);
    if (size === 1) size = Number(bytes.readBigUInt64BE(offset + 8));
    else if (size === 0) size = bytes.length - offset;
    boxes.push({ type, offset });
    if (size < 8) break;
    offset += size;
  }
  return boxes;
}

/** One frame of the clip as RGB bytes (width x height x 3). */
async function frameRgb(file: string, index: number): Promise<Buffer> {
  const { stdout } = await run(
    FFMPEG,
    ["-v", "error", "-i", file, "-vf", `select=eq(n\\,${index})`, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"],
    { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout as unknown as Buffer;
}

function pixel(rgb: Buffer, width: number, x: number, y: number): [number, number, number] {
  const at = (y * width + x) * 3;
  return [rgb[at]!, rgb[at + 1]!, rgb[at + 2]!];
}

/** ffmpeg processes whose command line names `needle` (the output file is on it). */
function enginesWorkingOn(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, "latin1");
      if (commandLine.includes(needle) && commandLine.includes("ffmpeg")) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

const sizes: Array<{ name: string; format: "png" | "jpeg"; width: number; height: number; seconds: number }> = [
  { name: "480p 16:9 from a PNG", format: "png", width: 854, height: 480, seconds: 2 },
  { name: "480p 9:16 from a JPEG", format: "jpeg", width: 480, height: 854, seconds: 1 },
  { name: "480p 3:4 from a JPEG, 1.5 s", format: "jpeg", width: 480, height: 640, seconds: 1.5 },
  { name: "720p 1:1 from a PNG", format: "png", width: 720, height: 720, seconds: 3 },
  { name: "1080p 16:9 from a JPEG", format: "jpeg", width: 1920, height: 1080, seconds: 1 },
];

for (const size of sizes) {
  test(`renders ${size.name}: H.264 yuv420p, exact size and length, index first, no audio`, async (t) => {
    const file = clipPath();
    await renderKenBurns(
      { bytes: await photo[size.format], mediaType: `image/${size.format}` },
      { width: size.width, height: size.height, durationSeconds: size.seconds, outputFile: file },
    );
    const probed = await probe(file);
    t.is(probed.codec, "h264");
    t.is(probed.pixelFormat, "yuv420p");
    t.is(probed.width, size.width);
    t.is(probed.height, size.height);
    t.is(probed.frames, kenBurnsFrames(size.seconds));
    t.true(Math.abs(probed.duration - size.seconds) <= 0.1, `lasts ${probed.duration} s`);
    t.is(probed.audioStreams, 0);
    const boxes = topLevelBoxes(readFileSync(file));
    const moov = boxes.find((box) => box.type === "moov");
    const mdat = boxes.find((box) => box.type === "mdat");
    t.truthy(moov);
    t.truthy(mdat);
    t.true(moov!.offset < mdat!.offset, "faststart: moov before mdat");
  });
}

test("the camera moves: the last frame is zoomed in on the first", async (t) => {
  const file = clipPath();
  await renderKenBurns({ bytes: await photo.png, mediaType: "image/png" }, { width: 854, height: 480, durationSeconds: 3, outputFile: file });
  const first = await frameRgb(file, 0);
  const last = await frameRgb(file, kenBurnsFrames(3) - 1);
  t.is(first.length, 854 * 480 * 3);
  t.is(last.length, first.length);
  // The photo's red grows left to right; zoomed in, the left edge shows a redder column than at the start.
  const firstLeft = pixel(first, 854, 2, 240)[0];
  const lastLeft = pixel(last, 854, 2, 240)[0];
  t.true(lastLeft > firstLeft + 10, `left edge red ${firstLeft} -> ${lastLeft}`);
});

test("progress is reported up to 1", async (t) => {
  const seen: number[] = [];
  await renderKenBurns(
    { bytes: await photo.jpeg, mediaType: "image/jpeg" },
    { width: 480, height: 480, durationSeconds: 1, outputFile: clipPath(), onProgress: (fraction) => seen.push(fraction) },
  );
  t.true(seen.length > 0);
  t.is(seen.at(-1), 1);
  t.true(seen.every((fraction) => fraction >= 0 && fraction <= 1));
});

test("an EXIF-rotated JPEG is rendered upright", async (t) => {
  // Stored 1600x1000, left half red and right half blue; orientation 6 shows it turned a quarter
  // clockwise (1000x1600): red on top, blue below.
  const stored = Buffer.alloc(1600 * 1000 * 3);
  for (let y = 0; y < 1000; y++) {
    for (let x = 0; x < 1600; x++) {
      const at = (y * 1600 + x) * 3;
      if (x < 800) stored[at] = 230;
      else stored[at + 2] = 230;
    }
  }
  const bytes = await sharp(stored, raw).jpeg().withMetadata({ orientation: 6 }).toBuffer();
  const file = clipPath();
  await renderKenBurns({ bytes, mediaType: "image/jpeg" }, { width: 480, height: 480, durationSeconds: 1, outputFile: file });
  const first = await frameRgb(file, 0);
  for (const [x, y, colour] of [
    [60, 60, "red"],
    [420, 60, "red"],
    [60, 420, "blue"],
    [420, 420, "blue"],
  ] as const) {
    const [r, , b] = pixel(first, 480, x, y);
    t.true(colour === "red" ? r > 150 && b < 80 : b > 150 && r < 80, `(${x}, ${y}) is ${colour}: rgb ${pixel(first, 480, x, y).join(",")}`);
  }
});

test("a transparent PNG is laid on black, not on its hidden colours", async (t) => {
  // Fully transparent white: ffmpeg alone would drop the alpha and show white.
  const pixels = Buffer.alloc(640 * 480 * 4, 255);
  for (let at = 3; at < pixels.length; at += 4) pixels[at] = 0;
  const bytes = await sharp(pixels, { raw: { width: 640, height: 480, channels: 4 } })
    .png()
    .toBuffer();
  const file = clipPath();
  await renderKenBurns({ bytes, mediaType: "image/png" }, { width: 640, height: 480, durationSeconds: 1, outputFile: file });
  const [r, g, b] = pixel(await frameRgb(file, 0), 640, 320, 240);
  t.true(r < 30 && g < 30 && b < 30, `centre is rgb ${r},${g},${b}`);
});

test("an abort kills ffmpeg and leaves no output file", async (t) => {
  const file = clipPath();
  const controller = new AbortController();
  const rendering = renderKenBurns(
    { bytes: await photo.png, mediaType: "image/png" },
    { width: 1280, height: 720, durationSeconds: 20, outputFile: file, signal: controller.signal },
  );
  await eventually(() => enginesWorkingOn(file).length > 0, "ffmpeg to start");
  t.is(enginesWorkingOn(file).length, 1, "ffmpeg was running");
  const reason = new Error("stop");
  controller.abort(reason);
  const error = await t.throwsAsync(rendering);
  t.is(error, reason);
  t.deepEqual(enginesWorkingOn(file), []);
  t.false(existsSync(file));
});

test("an aborted signal stops the render before ffmpeg starts", async (t) => {
  const file = clipPath();
  const reason = new Error("stop");
  const error = await t.throwsAsync(
    renderKenBurns(
      { bytes: await photo.png, mediaType: "image/png" },
      { width: 854, height: 480, durationSeconds: 1, outputFile: file, signal: AbortSignal.abort(reason) },
    ),
  );
  t.is(error, reason);
  t.deepEqual(enginesWorkingOn(file), []);
  t.false(existsSync(file));
});

test("the deadline kills ffmpeg: AudioEngineError timeout, no output file", async (t) => {
  const file = clipPath();
  const error = await t.throwsAsync(
    renderKenBurns({ bytes: await photo.png, mediaType: "image/png" }, { width: 1280, height: 720, durationSeconds: 20, outputFile: file, timeoutMs: 300 }),
    { instanceOf: AudioEngineError },
  );
  t.is(error.reason, "timeout");
  t.regex(error.message, /^ffmpeg did not finish within/);
  t.deepEqual(enginesWorkingOn(file), []);
  t.false(existsSync(file));
});

test("the default deadline is 60 s plus 10 s per second of clip", (t) => {
  t.is(kenBurnsTimeoutMs(1), 70_000);
  t.is(kenBurnsTimeoutMs(30), 360_000);
});

test("a missing ffmpeg is AudioEngineError missing_engine", async (t) => {
  const error = await t.throwsAsync(
    renderKenBurns(
      { bytes: await photo.png, mediaType: "image/png" },
      { width: 854, height: 480, durationSeconds: 1, outputFile: clipPath(), ffmpeg: path.join(scratch, "no-such-ffmpeg") },
    ),
    { instanceOf: AudioEngineError },
  );
  t.is(error.reason, "missing_engine");
  t.is(error.message, "ffmpeg is not installed on this machine");
});

test("bytes that are no picture fail with a readable message", async (t) => {
  const file = clipPath();
  const error = await t.throwsAsync(
    renderKenBurns({ bytes: Buffer.from("not a picture at all"), mediaType: "image/png" }, { width: 854, height: 480, durationSeconds: 1, outputFile: file }),
    { instanceOf: AudioEngineError },
  );
  t.is(error.reason, "failed");
  t.regex(error.message, /reference photo could not be read/);
  t.false(existsSync(file));
});

test("a truncated PNG fails without leaving the output file", async (t) => {
  const file = clipPath();
  const whole = await photo.png;
  const error = await t.throwsAsync(
    renderKenBurns({ bytes: whole.subarray(0, 2000), mediaType: "image/png" }, { width: 854, height: 480, durationSeconds: 1, outputFile: file }),
    { instanceOf: AudioEngineError },
  );
  t.is(error.reason, "failed");
  t.false(error.message.includes(scratch), "the message names no path");
  t.false(existsSync(file));
});

test("sizes H.264 in yuv420p cannot take, and impossible lengths, are refused before ffmpeg runs", async (t) => {
  const image = { bytes: await photo.png, mediaType: "image/png" };
  await t.throwsAsync(renderKenBurns(image, { width: 853, height: 480, durationSeconds: 1, outputFile: clipPath() }), { instanceOf: RangeError });
  await t.throwsAsync(renderKenBurns(image, { width: 854, height: 8, durationSeconds: 1, outputFile: clipPath() }), { instanceOf: RangeError });
  await t.throwsAsync(renderKenBurns(image, { width: 854, height: 480, durationSeconds: 0, outputFile: clipPath() }), { instanceOf: RangeError });
  await t.throwsAsync(renderKenBurns(image, { width: 854, height: 480, durationSeconds: Number.NaN, outputFile: clipPath() }), { instanceOf: RangeError });
});
