/**
 * Real audio for the fake vendors, made by the ffmpeg binary (a 440 Hz sine): mp3, wav, Ogg Opus,
 * flac, AAC (ADTS), raw s16le mono or raw G.711 (u-law, A-law), at any sample rate and length. Cached by what was asked, so
 * a suite asks ffmpeg once per shape. `probeAudio` reads what a file is with ffprobe.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export type FakeAudioCodec = "mp3" | "wav" | "opus" | "flac" | "aac" | "pcm" | "ulaw" | "alaw";

export interface FakeAudioSpec {
  codec: FakeAudioCodec;
  durationSeconds: number;
  /** Default: 44100 (mp3, wav, flac, aac), 48000 (opus), 24000 (pcm), 8000 (ulaw, alaw). */
  sampleRate?: number;
  /** mp3, opus and aac only. */
  bitrateKbps?: number;
}

export const AUDIO_MEDIA_TYPES: Record<FakeAudioCodec, string> = {
  mp3: "audio/mpeg",
  wav: "audio/wav",
  opus: "audio/ogg",
  flac: "audio/flac",
  aac: "audio/aac",
  pcm: "audio/pcm",
  ulaw: "audio/basic",
  alaw: "audio/x-alaw-basic",
};

/** The length a fake synthesizes for some text: 0.06 s a character at speed 1, at least 0.5 s, at most 10 minutes. */
export function speechSeconds(characters: number, speed = 1): number {
  return Math.min(600, Math.max(0.5, Math.round((characters * 6) / speed) / 100));
}

const cache = new Map<string, Promise<Buffer>>();

export function fakeAudio(spec: FakeAudioSpec): Promise<Buffer> {
  const normalised = { ...spec, durationSeconds: Math.round(spec.durationSeconds * 100) / 100, sampleRate: spec.sampleRate ?? defaultRate(spec.codec) };
  const key = JSON.stringify(normalised);
  let audio = cache.get(key);
  if (!audio) {
    audio = encode(normalised);
    cache.set(key, audio);
    audio.catch(() => cache.delete(key));
  }
  return audio;
}

function defaultRate(codec: FakeAudioCodec): number {
  if (codec === "opus") return 48_000;
  if (codec === "pcm") return 24_000;
  if (codec === "ulaw" || codec === "alaw") return 8000;
  return 44_100;
}

const CODEC_ARGS: Record<FakeAudioCodec, (bitrate: number | undefined) => string[]> = {
  mp3: (bitrate) => ["-c:a", "libmp3lame", "-b:a", `${bitrate ?? 128}k`, "-f", "mp3"],
  wav: () => ["-c:a", "pcm_s16le", "-f", "wav"],
  opus: (bitrate) => ["-c:a", "libopus", "-b:a", `${bitrate ?? 32}k`, "-f", "ogg"],
  flac: () => ["-c:a", "flac", "-f", "flac"],
  aac: (bitrate) => ["-c:a", "aac", "-b:a", `${bitrate ?? 128}k`, "-f", "adts"],
  pcm: () => ["-c:a", "pcm_s16le", "-f", "s16le"],
  ulaw: () => ["-c:a", "pcm_mulaw", "-f", "mulaw"],
  alaw: () => ["-c:a", "pcm_alaw", "-f", "alaw"],
};

/** Through a file, not a pipe: muxers write their lengths (RIFF, Xing) only when they can seek. */
async function encode(spec: Required<Pick<FakeAudioSpec, "codec" | "durationSeconds" | "sampleRate">> & FakeAudioSpec): Promise<Buffer> {
  return withTempDir(async (dir) => {
    const output = join(dir, `audio.${spec.codec}`);
    const source = `sine=frequency=440:sample_rate=${spec.sampleRate}:duration=${spec.durationSeconds}`;
    await run("ffmpeg", [
      "-hide_banner",
      "-loglevel",
      "error",
      "-f",
      "lavfi",
      "-i",
      source,
      "-ac",
      "1",
      "-ar",
      String(spec.sampleRate),
      ...CODEC_ARGS[spec.codec](spec.bitrateKbps),
      "-y",
      output,
    ]);
    return readFile(output);
  });
}

export interface ProbedAudio {
  /** ffprobe's codec name: mp3, pcm_s16le, opus, flac, aac. */
  codec: string;
  /** ffprobe's container names (`wav`, `ogg`, `mp3`, `flac`, `aac`). */
  container: string;
  sampleRate: number;
  channels: number;
  durationSeconds: number;
}

/** What the bytes are, or undefined when ffprobe cannot read them (raw pcm, junk). */
export async function probeAudio(bytes: Buffer): Promise<ProbedAudio | undefined> {
  const probed = await probeFirstStream(bytes, "audio", "sample_rate,channels");
  if (!probed) return undefined;
  const { stream, format } = probed;
  return {
    codec: String(stream.codec_name),
    container: String(format.format_name),
    sampleRate: Number(stream.sample_rate),
    channels: Number(stream.channels),
    durationSeconds: Number(format.duration),
  };
}

/** ffprobe's view of the bytes' first stream of a kind and their container, or undefined when it finds none. */
export async function probeFirstStream(
  bytes: Buffer,
  kind: "audio" | "video",
  streamEntries: string,
): Promise<{ stream: Record<string, string | number>; format: Record<string, string> } | undefined> {
  return withTempDir(async (dir) => {
    const input = join(dir, "input");
    await writeFile(input, bytes);
    let stdout: string;
    try {
      ({ stdout } = await run("ffprobe", [
        "-v",
        "error",
        "-show_entries",
        `stream=codec_name,codec_type,${streamEntries}:format=format_name,duration`,
        "-of",
        "json",
        input,
      ]));
    } catch {
      return undefined;
    }
    const parsed = JSON.parse(stdout) as { streams?: Array<Record<string, string | number>>; format?: Record<string, string> };
    const stream = parsed.streams?.find((candidate) => candidate.codec_type === kind);
    return stream && parsed.format ? { stream, format: parsed.format } : undefined;
  });
}

export async function withTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "gw-fake-audio-"));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
