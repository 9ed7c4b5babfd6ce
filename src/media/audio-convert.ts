// Convert speech audio between the formats the speech endpoints answer in, and measure it, with
// ffmpeg and ffprobe. The input is audio the gateway made or a vendor sent, in a format it names
// (never sniffed here), so its demuxer is forced from that name; it goes in on stdin with only
// the `pipe` protocol allowed. The output is written to a private temp file rather than stdout
// because WAV, FLAC and MP3 put their sizes and lengths in headers ffmpeg can only fill in by
// seeking back, which a pipe cannot do.
import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SpeechFormat } from "../config/audio-catalog-schema.js";
import { measureStream } from "./audio-packets.js";
import { AudioEngineError, locateEngine, runEngine } from "./audio-process.js";
import { withTempDir } from "./temp-dir.js";

/** What `pcm` means (OpenAI's): 24 kHz, 16-bit signed little-endian, mono, no header. */
export const PCM_RATE = 24_000;

/** The Content-Type of each speech format. */
export const SPEECH_MEDIA_TYPES: Readonly<Record<SpeechFormat, string>> = {
  mp3: "audio/mpeg",
  wav: "audio/wav",
  opus: "audio/ogg; codecs=opus",
  flac: "audio/flac",
  pcm: `audio/L16; rate=${PCM_RATE}; channels=1`,
};

export function mediaTypeOfSpeech(format: SpeechFormat): string {
  return SPEECH_MEDIA_TYPES[format];
}

export interface SpeechBytes {
  bytes: Buffer;
  format: SpeechFormat;
  /** For `pcm` input only (mono, 16-bit little-endian); default 24000. */
  sampleRate?: number;
}

export interface AudioRunOptions {
  signal?: AbortSignal;
  /** Default 60 s; the engine is killed after it. */
  timeoutMs?: number;
}

export interface ConvertOptions extends AudioRunOptions {
  /** The ffmpeg binary (default: found like findFfmpeg). */
  ffmpeg?: string;
  /** Play faster (> 1) or slower (< 1) without changing the pitch; default 1. */
  tempo?: number;
  /** Largest output accepted; default 256 MiB. */
  maxOutputBytes?: number;
}

export interface MeasureOptions extends AudioRunOptions {
  /** The ffprobe binary (default: found like findFfprobe). */
  ffprobe?: string;
}

export interface AudioMeasurement {
  /** Measured from the audio packets, rounded to the millisecond. */
  durationMs: number;
  codec: string;
  sampleRate: number;
  channels: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_OUTPUT = 256 * 1024 * 1024;

const OUTPUT: Record<SpeechFormat, { extension: string; args: string[] }> = {
  mp3: { extension: "mp3", args: ["-c:a", "libmp3lame", "-b:a", "128k", "-f", "mp3"] },
  wav: { extension: "wav", args: ["-c:a", "pcm_s16le", "-f", "wav"] },
  // Opus runs at 48 kHz (its decoders output that whatever the source was).
  opus: { extension: "ogg", args: ["-c:a", "libopus", "-b:a", "64k", "-ar", "48000", "-f", "ogg"] },
  flac: { extension: "flac", args: ["-c:a", "flac", "-f", "flac"] },
  pcm: { extension: "pcm", args: ["-c:a", "pcm_s16le", "-ar", String(PCM_RATE), "-ac", "1", "-f", "s16le"] },
};

/** The demuxer options that read `format` (pcm needs its rate and layout stated: it has no header). */
export function speechInputFormat(format: SpeechFormat, sampleRate?: number): string[] {
  switch (format) {
    case "mp3":
      return ["-f", "mp3"];
    case "wav":
      return ["-f", "wav"];
    case "opus":
      return ["-f", "ogg"];
    case "flac":
      return ["-f", "flac"];
    case "pcm":
      return ["-f", "s16le", "-ar", String(checkedRate(sampleRate)), "-ac", "1"];
  }
}

/** `input` re-encoded as `to`; AudioEngineError when ffmpeg is missing, too slow or fails. */
export async function convertAudio(input: SpeechBytes, to: SpeechFormat, options: ConvertOptions = {}): Promise<Buffer> {
  const binary = await locateEngine("ffmpeg", options.ffmpeg);
  const maxOutput = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const output = OUTPUT[to];
  const tempo = options.tempo ?? 1;
  return withTempDir(async (directory) => {
    const file = path.join(directory, `output.${output.extension}`);
    const args = [
      "-hide_banner",
      "-nostats",
      "-loglevel",
      "error",
      "-protocol_whitelist",
      "pipe",
      ...speechInputFormat(input.format, input.sampleRate),
      "-i",
      "pipe:0",
      "-map",
      "0:a:0",
      // No tags or encoder version strings: plain headers that every reader takes.
      "-map_metadata",
      "-1",
      "-fflags",
      "+bitexact",
      ...(tempo === 1 ? [] : ["-filter:a", tempoFilter(tempo)]),
      ...output.args,
      "-fs",
      String(maxOutput),
      "-y",
      `file:${file}`,
    ];
    await runEngine("ffmpeg", binary, args, { stdin: input.bytes, signal: options.signal, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS });
    if ((await stat(file)).size >= maxOutput) throw new AudioEngineError("failed", "ffmpeg produced more output than allowed", { engine: "ffmpeg" });
    return readFile(file);
  });
}

/** Length, codec, rate and channels of speech audio in a known format, measured from its packets. */
export async function measureAudio(bytes: Buffer, format: SpeechFormat, sampleRate?: number, options: MeasureOptions = {}): Promise<AudioMeasurement> {
  if (format === "pcm") {
    // Raw samples: the length is arithmetic, exactly.
    const rate = checkedRate(sampleRate);
    return { durationMs: Math.round((Math.floor(bytes.length / 2) / rate) * 1000), codec: "pcm_s16le", sampleRate: rate, channels: 1 };
  }
  const measured = await withTempDir(async (directory) => {
    const file = path.join(directory, `input.${OUTPUT[format].extension}`);
    await writeFile(file, bytes, { mode: 0o600 });
    return measureStream({
      file,
      inputFormat: speechInputFormat(format),
      signal: options.signal,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ffprobe: options.ffprobe,
    });
  });
  if (measured.packets === 0) throw new AudioEngineError("failed", `ffprobe found no audio packets in the ${format} audio`, { engine: "ffprobe" });
  return { durationMs: Math.round(measured.durationSeconds * 1000), codec: measured.codec, sampleRate: measured.sampleRate, channels: measured.channels };
}

/** ffmpeg's atempo takes 0.5 to 100 per stage; slower than half speed takes several stages. */
function tempoFilter(tempo: number): string {
  if (!Number.isFinite(tempo) || tempo < 0.01 || tempo > 100) throw new RangeError(`tempo ${tempo} is outside 0.01..100`);
  const stages: string[] = [];
  let rest = tempo;
  while (rest < 0.5) {
    stages.push("atempo=0.5");
    rest /= 0.5;
  }
  stages.push(`atempo=${rest.toFixed(6)}`);
  return stages.join(",");
}

function checkedRate(sampleRate: number | undefined): number {
  const rate = sampleRate ?? PCM_RATE;
  if (!Number.isInteger(rate) || rate < 1000 || rate > 384_000) throw new RangeError(`sample rate ${rate} is not a valid PCM rate`);
  return rate;
}
