// The `local/kenburns` clip: a slow zoom-in and pan over one photo, made by ffmpeg. The photo goes
// in on stdin with its demuxer forced from its magic bytes (only the `pipe` protocol allowed for
// the input, only `file` for the output). ffmpeg scales and centre-crops it to cover a canvas
// CANVAS_SCALE times the clip's size (zoompan moves in whole canvas pixels, so a larger canvas
// makes the motion smoother), then zoompan renders exactly duration x FPS frames of a window that
// zooms in and drifts, encoded as H.264 yuv420p (BT.709) in an mp4 with its index in front
// (+faststart), no audio. Pictures ffmpeg would read wrongly (EXIF-rotated, transparent, CMYK,
// GIF, animated WebP) are first made upright, opaque sRGB PNG by sharp; the rest go as they are.
import { rm } from "node:fs/promises";
import type { Metadata } from "sharp";
import { AudioEngineError, locateEngine, runEngine } from "./audio-process.js";
import { loadSharp } from "./sharp-loader.js";

export interface KenBurnsImage {
  bytes: Buffer;
  /** The type the gateway sniffed; the bytes' own magic decides, this is only the fallback. */
  mediaType: string;
}

export interface KenBurnsOptions {
  /** The clip's size in pixels: even numbers (H.264 in yuv420p), 16 to 4096. */
  width: number;
  height: number;
  /** Rounded to whole frames at 25 fps; at least one frame, at most 10 minutes. */
  durationSeconds: number;
  /** An mp4 written here (a path the caller made in its own directory); removed again when the render fails. */
  outputFile: string;
  signal?: AbortSignal;
  /** ffmpeg is killed after this; default 60 s + 10 s per second of clip. */
  timeoutMs?: number;
  /** The ffmpeg binary (default: found like findFfmpeg). */
  ffmpeg?: string;
  /** Called as frames are encoded with the share done, 0 to 1. */
  onProgress?: (fraction: number) => void;
}

export const KENBURNS_FPS = 25;
/** The canvas zoompan works on, in multiples of the clip's size. */
const CANVAS_SCALE = 3;
const MAX_EDGE = 4096;
const MAX_SECONDS = 600;

type Demuxer = "png_pipe" | "jpeg_pipe" | "webp_pipe" | "gif_pipe";

/** The number of frames a clip of `durationSeconds` has (its length is exactly frames / 25). */
export function kenBurnsFrames(durationSeconds: number): number {
  return Math.max(1, Math.round(durationSeconds * KENBURNS_FPS));
}

/** The default deadline of one render: 60 s plus 10 s per second of clip. */
export function kenBurnsTimeoutMs(durationSeconds: number): number {
  return 60_000 + Math.ceil(durationSeconds * 10_000);
}

/** Render the clip into `options.outputFile`; AudioEngineError when ffmpeg is missing, too slow or fails, or the photo is unreadable. */
export async function renderKenBurns(image: KenBurnsImage, options: KenBurnsOptions): Promise<void> {
  checkOptions(options);
  const binary = await locateEngine("ffmpeg", options.ffmpeg);
  const input = await ffmpegReadable(image);
  options.signal?.throwIfAborted();
  const frames = kenBurnsFrames(options.durationSeconds);
  let progressText = "";
  const args = [
    "-hide_banner",
    "-nostats",
    "-loglevel",
    "error",
    ...(options.onProgress ? ["-progress", "pipe:1"] : []),
    "-protocol_whitelist",
    "pipe",
    "-f",
    input.demuxer,
    "-i",
    "pipe:0",
    "-filter_complex",
    filterGraph(options.width, options.height, frames),
    "-frames:v",
    String(frames),
    "-an",
    "-sn",
    "-dn",
    "-map_metadata",
    "-1",
    "-c:v",
    "libx264",
    "-preset",
    "veryfast",
    "-crf",
    "20",
    "-profile:v",
    "high",
    "-pix_fmt",
    "yuv420p",
    "-colorspace",
    "bt709",
    "-color_primaries",
    "bt709",
    "-color_trc",
    "bt709",
    "-color_range",
    "tv",
    "-movflags",
    "+faststart",
    "-f",
    "mp4",
    "-protocol_whitelist",
    "file",
    "-y",
    `file:${options.outputFile}`,
  ];
  try {
    await runEngine("ffmpeg", binary, args, {
      stdin: input.bytes,
      signal: options.signal,
      timeoutMs: options.timeoutMs ?? kenBurnsTimeoutMs(options.durationSeconds),
      maxStdoutBytes: 1024 * 1024,
      onStdout: options.onProgress
        ? (chunk) => {
            // `-progress` writes blocks of key=value lines; the last whole `frame=` line counts.
            progressText = (progressText + chunk.toString("latin1")).slice(-4096);
            const done = [...progressText.matchAll(/^frame=(\d+)\n/gm)].at(-1);
            if (done) options.onProgress!(Math.min(1, Number(done[1]) / frames));
          }
        : undefined,
    });
  } catch (error) {
    await rm(options.outputFile, { force: true });
    throw error;
  }
}

/**
 * Cover-scale the photo to the canvas (the clip's ratio, centre-cropped), then zoom in from the
 * whole canvas to 1/ZOOM of it along an eased path (moving from the first frame, settling at the
 * last) while the window drifts from the centre along the clip's long side and a little across:
 * right and up for landscape and square clips, up and right for portrait ones. The zoom grows
 * geometrically (a steady apparent speed): to 1.08 for 1-2 s, 4% per second up to 1.3 from 7.5 s.
 */
function filterGraph(width: number, height: number, frames: number): string {
  const canvasWidth = even(width * CANVAS_SCALE);
  const canvasHeight = even(height * CANVAS_SCALE);
  const seconds = frames / KENBURNS_FPS;
  const zoom = Math.min(1.3, 1 + Math.max(0.08, 0.04 * seconds));
  const portrait = height > width;
  const drift = portrait ? { x: 0.1, y: -0.2 } : { x: 0.25, y: -0.1 };
  // Share of the path done at output frame `on`: half linear, half smoothstep.
  const p = `(on/${Math.max(1, frames - 1)})`;
  const eased = `(0.5*${p}+0.5*${p}*${p}*(3-2*${p}))`;
  const zoomExpression = `exp(${Math.log(zoom).toFixed(6)}*${eased})`;
  const x = `(iw-iw/zoom)*(0.5+${drift.x}*${eased})`;
  const y = `(ih-ih/zoom)*(0.5+${drift.y}*${eased})`;
  return [
    `scale=${canvasWidth}:${canvasHeight}:force_original_aspect_ratio=increase:flags=lanczos:out_color_matrix=bt709:out_range=tv`,
    `crop=${canvasWidth}:${canvasHeight}`,
    "setsar=1",
    "format=yuv420p",
    `zoompan=z='${zoomExpression}':x='${x}':y='${y}':d=${frames}:s=${width}x${height}:fps=${KENBURNS_FPS}`,
    "setsar=1",
  ].join(",");
}

function even(value: number): number {
  return Math.max(2, Math.round(value / 2) * 2);
}

function checkOptions(options: KenBurnsOptions): void {
  for (const [name, value] of [
    ["width", options.width],
    ["height", options.height],
  ] as const) {
    if (!Number.isInteger(value) || value < 16 || value > MAX_EDGE || value % 2 !== 0) {
      throw new RangeError(`the clip's ${name} must be an even number of pixels from 16 to ${MAX_EDGE}, not ${value}`);
    }
  }
  const seconds = options.durationSeconds;
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_SECONDS) {
    throw new RangeError(`the clip's duration must be more than 0 and at most ${MAX_SECONDS} seconds, not ${seconds}`);
  }
  if (!options.outputFile) throw new RangeError("an output file is needed");
}

/** The photo as ffmpeg reads it right, with the demuxer that reads it. */
async function ffmpegReadable(image: KenBurnsImage): Promise<{ bytes: Buffer; demuxer: Demuxer }> {
  const demuxer = sniffDemuxer(image.bytes) ?? DEMUXER_OF_MEDIA_TYPE[image.mediaType.toLowerCase()];
  if (!demuxer) throw unreadable();
  const sharp = await loadSharp();
  let metadata: Metadata;
  try {
    metadata = await sharp(image.bytes).metadata();
  } catch {
    throw unreadable();
  }
  const plain =
    (demuxer === "png_pipe" || demuxer === "jpeg_pipe" || demuxer === "webp_pipe") &&
    (metadata.orientation ?? 1) === 1 &&
    metadata.hasAlpha !== true &&
    (metadata.pages ?? 1) === 1 &&
    (metadata.space === "srgb" || metadata.space === "b-w");
  if (plain) return { bytes: image.bytes, demuxer };
  try {
    const bytes = await sharp(image.bytes, { failOn: "error" })
      .rotate()
      .flatten({ background: "#000000" })
      .toColourspace("srgb")
      .png({ compressionLevel: 1 })
      .toBuffer();
    return { bytes, demuxer: "png_pipe" };
  } catch {
    throw unreadable();
  }
}

const DEMUXER_OF_MEDIA_TYPE: Record<string, Demuxer> = {
  "image/png": "png_pipe",
  "image/jpeg": "jpeg_pipe",
  "image/jpg": "jpeg_pipe",
  "image/webp": "webp_pipe",
  "image/gif": "gif_pipe",
};

function sniffDemuxer(bytes: Buffer): Demuxer | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "png_pipe";
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpeg_pipe";
  if (bytes.subarray(0, 4).toString("latin1") === "RIFF" && bytes.subarray(8, 12).toString("latin1") === "WEBP") return "webp_pipe";
  if (/^GIF8[79]a$/.test(bytes.subarray(0, 6).toString("latin1"))) return "gif_pipe";
  return undefined;
}

function unreadable(): AudioEngineError {
  return new AudioEngineError("failed", "the reference photo could not be read (PNG, JPEG, WebP or GIF expected)", { engine: "ffmpeg" });
}
