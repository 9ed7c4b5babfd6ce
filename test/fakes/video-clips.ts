/**
 * Real video for the fake video vendors, made by the ffmpeg binary: an H.264 mp4 of ffmpeg's
 * test pattern (320x180, 25 fps, yuv420p, moov atom first), as long as asked. Cached by length,
 * so a suite asks ffmpeg once per duration. `probeVideo` reads what a file is with ffprobe.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { probeFirstStream, withTempDir } from "./audio-files.js";

const run = promisify(execFile);

export const FAKE_CLIP_SIZE = { width: 320, height: 180 } as const;

const cache = new Map<number, Promise<Buffer>>();

/** An mp4 clip of `durationSeconds` (rounded to 1/100 s; at least 0.1 s). */
export function fakeClip(durationSeconds: number): Promise<Buffer> {
  const duration = Math.max(0.1, Math.round(durationSeconds * 100) / 100);
  let clip = cache.get(duration);
  if (!clip) {
    clip = encode(duration);
    cache.set(duration, clip);
    clip.catch(() => cache.delete(duration));
  }
  return clip;
}

/** Through a file, not a pipe: `+faststart` moves the moov atom, which needs a seekable output. */
async function encode(durationSeconds: number): Promise<Buffer> {
  return withTempDir(async (dir) => {
    const output = join(dir, "clip.mp4");
    const { width, height } = FAKE_CLIP_SIZE;
    await run("ffmpeg", [
      "-hide_banner",
      "-loglevel",
      "error",
      "-f",
      "lavfi",
      "-i",
      `testsrc=size=${width}x${height}:rate=25`,
      "-t",
      String(durationSeconds),
      "-c:v",
      "libx264",
      "-pix_fmt",
      "yuv420p",
      "-movflags",
      "+faststart",
      "-y",
      output,
    ]);
    return readFile(output);
  });
}

export interface ProbedVideo {
  /** ffprobe's codec name (`h264`). */
  codec: string;
  /** ffprobe's container names (`mov,mp4,m4a,3gp,3g2,mj2`). */
  container: string;
  width: number;
  height: number;
  durationSeconds: number;
}

/** What the bytes are, or undefined when ffprobe finds no video stream in them. */
export async function probeVideo(bytes: Buffer): Promise<ProbedVideo | undefined> {
  const probed = await probeFirstStream(bytes, "video", "width,height");
  if (!probed) return undefined;
  const { stream, format } = probed;
  return {
    codec: String(stream.codec_name),
    container: String(format.format_name),
    width: Number(stream.width),
    height: Number(stream.height),
    durationSeconds: Number(format.duration),
  };
}
