// Read an audio file's first audio stream with ffprobe in one demux-only pass: its codec, rate
// and channels, the container's claimed duration, and its length measured from the packets
// themselves (no decoding). A header can claim anything; the packets are what a decoder would
// play. ffprobe prints one line per packet, so the lines are parsed as they come and only a
// running total is kept: memory stays bounded however long the file is.
import { AudioEngineError, locateEngine, runEngine } from "./audio-process.js";

export interface MeasuredStream {
  codec: string;
  sampleRate: number;
  channels: number;
  /** The end of the furthest packet, or the sum of packet durations when larger; 0 without packets. */
  durationSeconds: number;
  packets: number;
  /** The duration the container's header states, when it states one. */
  headerDurationSeconds?: number;
  /** False when the file has no audio stream at all. */
  hasStream: boolean;
}

export interface MeasureRun {
  /** Server-made path of the file to read. */
  file: string;
  /** ffprobe's input options that pin the demuxer (`-f mp3`, `-f s16le -ar 24000 -ac 1`). */
  inputFormat: string[];
  signal?: AbortSignal | undefined;
  timeoutMs: number;
  ffprobe?: string | undefined;
}

// A packet line is under 100 bytes; a longer one means ffprobe is printing something unexpected.
const MAX_LINE = 64 * 1024;

/** Run ffprobe on `run.file`; AudioEngineError on failure (exit status, deadline, missing engine). */
export async function measureStream(run: MeasureRun): Promise<MeasuredStream> {
  const binary = await locateEngine("ffprobe", run.ffprobe);
  const args = [
    "-v",
    "error",
    // Only the file itself: a demuxer that follows references (playlists, concat lists) gets nothing.
    "-protocol_whitelist",
    "file",
    ...run.inputFormat,
    "-select_streams",
    "a:0",
    "-show_entries",
    "format=duration:stream=codec_name,sample_rate,channels:packet=pts_time,duration_time",
    "-of",
    "compact=p=1:nk=0",
    `file:${run.file}`,
  ];
  const reader = new PacketReader();
  await runEngine("ffprobe", binary, args, { signal: run.signal, timeoutMs: run.timeoutMs, onStdout: (chunk) => reader.push(chunk) });
  return reader.end();
}

/** Parses ffprobe's compact output (`section|key=value|...` lines) incrementally. */
class PacketReader {
  private partial = "";
  private packets = 0;
  private furthestEnd = 0;
  private durationSum = 0;
  private stream: Record<string, string> | undefined;
  private format: Record<string, string> | undefined;

  push(chunk: Buffer): void {
    const text = this.partial + chunk.toString("latin1");
    const lines = text.split("\n");
    this.partial = lines.pop() ?? "";
    if (this.partial.length > MAX_LINE) throw new AudioEngineError("failed", "ffprobe printed an over-long line", { engine: "ffprobe" });
    for (const line of lines) this.line(line);
  }

  end(): MeasuredStream {
    this.line(this.partial);
    const headerDuration = finite(this.format?.duration);
    return {
      codec: this.stream?.codec_name && this.stream.codec_name !== "N/A" ? this.stream.codec_name : "unknown",
      sampleRate: Math.max(0, Math.round(finite(this.stream?.sample_rate) ?? 0)),
      channels: Math.max(0, Math.round(finite(this.stream?.channels) ?? 0)),
      durationSeconds: this.packets === 0 ? 0 : roundMicro(Math.max(this.furthestEnd, this.durationSum)),
      packets: this.packets,
      ...(headerDuration !== undefined && headerDuration >= 0 ? { headerDurationSeconds: roundMicro(headerDuration) } : {}),
      hasStream: this.stream !== undefined,
    };
  }

  private line(line: string): void {
    const fields = line.trimEnd().split("|");
    const section = fields[0];
    if (section !== "packet" && section !== "stream" && section !== "format") return;
    const values: Record<string, string> = {};
    for (const field of fields.slice(1)) {
      const equals = field.indexOf("=");
      if (equals > 0) values[field.slice(0, equals)] ??= field.slice(equals + 1);
    }
    if (section === "stream") this.stream ??= values;
    else if (section === "format") this.format ??= values;
    else this.packet(values);
  }

  private packet(values: Record<string, string>): void {
    this.packets += 1;
    const duration = Math.max(0, finite(values.duration_time) ?? 0);
    this.durationSum += duration;
    const start = finite(values.pts_time);
    if (start !== undefined) this.furthestEnd = Math.max(this.furthestEnd, start + duration);
  }
}

function finite(value: string | undefined): number | undefined {
  if (value === undefined || value === "N/A") return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}

function roundMicro(seconds: number): number {
  return Math.round(seconds * 1e6) / 1e6;
}
