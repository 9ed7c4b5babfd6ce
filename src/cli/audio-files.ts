// Where `gw audio speak` writes audio, mirroring `gw image generate`: -o FILE (overwritten: the
// user named it), `-o -` for stdout (never a terminal), else speech-<request id>.<ext> in the
// current directory, never overwriting a file there. The extension follows the audio's format;
// -o talk.wav without --format asks for wav.
import path from "node:path";
import type { SpeechFormat, SpeechResult } from "../client/audio-types.js";
import { UsageError } from "./cli-error.js";
import type { OutputTarget } from "./output-file.js";

/** File extensions that name a speech format (`.ogg` is Opus in Ogg, what `opus` answers). */
const FORMAT_OF_EXTENSION: Record<string, SpeechFormat> = { mp3: "mp3", wav: "wav", opus: "opus", ogg: "opus", flac: "flac", pcm: "pcm" };

/** The speech format a target's extension names (`-o talk.wav` -> wav), if any. */
export function speechFormatOfTarget(target: string): SpeechFormat | undefined {
  return FORMAT_OF_EXTENSION[path.extname(target).slice(1).toLowerCase()];
}

/**
 * The request's format: the one asked for, else what the target file's extension names; refused
 * when both are given and disagree. A format the gateway does not know is sent as asked: its
 * answer names the model's formats.
 */
export function speechFormatFor(format: string | undefined, target: string | undefined, names = { format: "--format", target: "-o" }): string | undefined {
  const targetFormat = target !== undefined && target !== "-" ? speechFormatOfTarget(target) : undefined;
  const asked = format?.trim().toLowerCase();
  if (asked !== undefined && targetFormat !== undefined && asked !== targetFormat) {
    throw new UsageError(`${names.target} ${target} names ${targetFormat} but ${names.format} is ${format}; make them agree`);
  }
  return asked ?? targetFormat;
}

/** The extension for audio of this format (the Content-Type's subtype when the format is unknown). */
export function audioExtension(result: Pick<SpeechResult, "format" | "contentType">): string {
  if (result.format) return result.format;
  const subtype = (result.contentType.split(";")[0] ?? "")
    .trim()
    .toLowerCase()
    .replace(/^audio\//, "");
  return subtype.replace(/[^a-z0-9]/g, "") || "bin";
}

/**
 * Where one speech result goes: -o FILE as given when its extension fits the audio (else
 * FILE.<ext>, as `gw image generate` does), or speech-<request id or time>.<ext> by default.
 */
export function speechTarget(result: Pick<SpeechResult, "format" | "contentType" | "requestId">, output: string | undefined): OutputTarget {
  const extension = audioExtension(result);
  if (output === undefined) return { path: `speech-${fileSafe(result.requestId) ?? timestamp()}.${extension}`, exclusive: true };
  const named = speechFormatOfTarget(output);
  if (named !== undefined && named === result.format) return { path: output, exclusive: false };
  const stem = named !== undefined ? output.slice(0, -path.extname(output).length) : output;
  return { path: `${stem}.${extension}`, exclusive: false };
}

/** What `gw audio speak --json` prints about one result (and a --batch line beside its status). */
export interface SpeechSummary {
  file: string | null;
  bytes: number;
  format: string | null;
  contentType: string;
  model: string | null;
  voice: string | null;
  characters: number | null;
  durationMs: number | null;
  assetId: string | null;
  requestId: string | null;
  upstreamTraceId?: string;
  assetWarning?: string;
}

export function speechSummary(result: SpeechResult, file: string | null): SpeechSummary {
  const summary: SpeechSummary = {
    file,
    bytes: result.audio.length,
    format: result.format ?? null,
    contentType: result.contentType,
    model: result.model ?? null,
    voice: result.voice ?? null,
    characters: result.characters ?? null,
    durationMs: result.durationMs ?? null,
    assetId: result.assetId ?? null,
    requestId: result.requestId ?? null,
  };
  if (result.upstreamTraceId !== undefined) summary.upstreamTraceId = result.upstreamTraceId;
  if (result.assetWarning !== undefined) summary.assetWarning = result.assetWarning;
  return summary;
}

function fileSafe(id: string | undefined): string | undefined {
  const safe = id?.replace(/[^A-Za-z0-9_-]/g, "_");
  return safe ? safe : undefined;
}

/** 20261125T001431123Z: sortable, and no two in the same millisecond in practice. */
function timestamp(): string {
  return new Date().toISOString().replace(/[-:.]/g, "");
}
