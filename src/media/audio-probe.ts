// Check a caller's upload before anything else reads it: sniff its bytes, accept only real audio
// containers, then let ffprobe read it with the demuxer of the sniffed container forced and only
// the `file` protocol allowed. A playlist (HLS), a concat list or anything else that makes
// ffmpeg open other resources is therefore refused twice: by the sniff, and because no demuxer
// that follows references can be chosen. The length is measured from the packets, not taken
// from the header (audio-packets.ts), so a header cannot make a long file look short or the
// other way round.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { measureStream } from "./audio-packets.js";
import { AudioEngineError } from "./audio-process.js";
import { withTempDir } from "./temp-dir.js";

export type AudioInputFailure = "not_audio" | "no_audio_stream" | "unreadable" | "timeout" | "missing_engine" | "engine_busy";

/**
 * The caller's audio cannot be used. The message is for the caller (it goes into a 400, or a 503
 * for `missing_engine` and `engine_busy`) and never names a path.
 */
export class AudioInputError extends Error {
  constructor(
    readonly reason: AudioInputFailure,
    message: string,
  ) {
    super(message);
    this.name = "AudioInputError";
  }
}

export type AudioContainer = "mp3" | "wav" | "ogg" | "flac" | "mp4" | "webm" | "aac" | "aiff";

export interface ProbedAudio {
  container: AudioContainer;
  /** The media type to send the file with. */
  mediaType: string;
  /** The file name extension to send the file with (vendors look at it). */
  extension: string;
  /** ffprobe's codec name of the first audio stream (`mp3`, `opus`, `pcm_s16le` ...). */
  codec: string;
  sampleRate: number;
  channels: number;
  /** Measured from the audio packets. */
  durationSeconds: number;
  /** What the container's header claims, when it claims something. */
  headerDurationSeconds?: number;
  /**
   * Set when the audio measured ends before the file does (a WAV whose data chunk is declared
   * shorter than what follows it): only these first bytes are the audio measured and billed, so
   * only they may be passed on.
   */
  measuredBytes?: number;
}

export interface ProbeOptions {
  signal?: AbortSignal;
  /** Default 20 s; ffprobe is killed after it. */
  timeoutMs?: number;
  /** The ffprobe binary (default: found like findFfprobe). */
  ffprobe?: string;
}

interface ContainerKind {
  container: AudioContainer;
  /** ffmpeg's demuxer for it. */
  demuxer: string;
  extension: string;
  mediaType: string;
}

const OGG: ContainerKind = { container: "ogg", demuxer: "ogg", extension: "ogg", mediaType: "audio/ogg" };
const M4A: ContainerKind = { container: "mp4", demuxer: "mov", extension: "m4a", mediaType: "audio/mp4" };

// file-type's extension -> what we accept it as. Everything else is refused before ffprobe runs.
const ACCEPTED: Record<string, ContainerKind> = {
  mp3: { container: "mp3", demuxer: "mp3", extension: "mp3", mediaType: "audio/mpeg" },
  wav: { container: "wav", demuxer: "wav", extension: "wav", mediaType: "audio/wav" },
  ogg: OGG,
  opus: OGG,
  oga: OGG,
  flac: { container: "flac", demuxer: "flac", extension: "flac", mediaType: "audio/flac" },
  m4a: M4A,
  m4b: M4A,
  // A video/mp4 or webm is taken for its audio stream (a screen recording, a browser's MediaRecorder).
  mp4: { ...M4A, extension: "mp4" },
  webm: { container: "webm", demuxer: "webm", extension: "webm", mediaType: "audio/webm" },
  aac: { container: "aac", demuxer: "aac", extension: "aac", mediaType: "audio/aac" },
  aif: { container: "aiff", demuxer: "aiff", extension: "aiff", mediaType: "audio/aiff" },
};

const DEFAULT_TIMEOUT_MS = 20_000;
const SUPPORTED = "mp3, wav, ogg/opus, flac, m4a/mp4, webm, aac or aiff";

/** Sniff and probe untrusted audio; AudioInputError when it cannot be used, the signal's reason when aborted. */
export async function probeAudio(bytes: Buffer, options: ProbeOptions = {}): Promise<ProbedAudio> {
  options.signal?.throwIfAborted();
  if (bytes.length === 0) throw new AudioInputError("not_audio", "The audio file is empty.");
  const kind = await sniff(bytes);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  const measured = await withTempDir(async (directory) => {
    const file = path.join(directory, `input.${kind.extension}`);
    await writeFile(file, bytes, { mode: 0o600 });
    try {
      return await measureStream({ file, inputFormat: ["-f", kind.demuxer], signal: options.signal, timeoutMs, ffprobe: options.ffprobe });
    } catch (error) {
      throw inputError(error, kind, timeoutMs, options.signal);
    }
  });

  if (!measured.hasStream) throw new AudioInputError("no_audio_stream", "The file holds no audio stream.");
  if (measured.packets === 0) throw new AudioInputError("no_audio_stream", "The file's audio stream holds no audio.");
  return {
    container: kind.container,
    mediaType: kind.mediaType,
    extension: kind.extension,
    codec: measured.codec,
    sampleRate: measured.sampleRate,
    channels: measured.channels,
    durationSeconds: measured.durationSeconds,
    ...(measured.headerDurationSeconds !== undefined ? { headerDurationSeconds: measured.headerDurationSeconds } : {}),
    ...measuredBytesOf(kind, bytes),
  };
}

/** A WAV's demuxer stops at its declared data chunk; anything after it was not measured. */
function measuredBytesOf(kind: ContainerKind, bytes: Buffer): { measuredBytes?: number } {
  if (kind.container !== "wav") return {};
  const end = wavDataEnd(bytes);
  return end !== undefined && end < bytes.length ? { measuredBytes: end } : {};
}

/** Where a RIFF/WAVE file's `data` chunk ends, as its header declares; undefined when there is no such chunk. */
export function wavDataEnd(bytes: Buffer): number | undefined {
  if (bytes.length < 12 || bytes.toString("latin1", 0, 4) !== "RIFF" || bytes.toString("latin1", 8, 12) !== "WAVE") return undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString("latin1", offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === "data") return offset + 8 + size;
    // Chunks are word-aligned: an odd size is followed by a pad byte.
    offset += 8 + size + (size % 2);
  }
  return undefined;
}

async function sniff(bytes: Buffer): Promise<ContainerKind> {
  let detected: { ext: string; mime: string } | undefined;
  try {
    // file-type loads on the first sniff: a server that is never sent a picture or a sound never pays for it.
    detected = await (await import("file-type")).fileTypeFromBuffer(bytes);
  } catch {
    detected = undefined;
  }
  const kind = detected ? ACCEPTED[detected.ext] : undefined;
  if (kind) return kind;
  const what = detected ? `${detected.mime} data` : "not a recognised file format";
  throw new AudioInputError("not_audio", `The file is not audio in a supported format (${SUPPORTED}); it is ${what}.`);
}

function inputError(error: unknown, kind: ContainerKind, timeoutMs: number, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return signal.reason;
  if (!(error instanceof AudioEngineError)) return error;
  if (error.reason === "missing_engine")
    return new AudioInputError("missing_engine", "Audio cannot be read on this server right now: ffprobe is not installed.");
  if (error.reason === "busy") return new AudioInputError("engine_busy", `Audio cannot be read on this server right now: ${error.message}.`);
  if (error.reason === "timeout") return new AudioInputError("timeout", `The audio took too long to read (over ${Math.round(timeoutMs / 1000)} s).`);
  return new AudioInputError("unreadable", `The audio could not be read: the file is damaged or is not really ${kind.container}.`);
}
