// What a finished clip is, measured by ffprobe on the file the gateway wrote: its length (from
// the container, which for the mp4 clips vendors and the local engine make is the length of its
// longest stream), size and codec. The file is one the gateway wrote itself; the mp4 demuxer is
// forced and only the `file` protocol allowed, as for audio.
import { AudioEngineError, locateEngine, runEngine } from "./audio-process.js";

export interface ProbedVideo {
  durationSeconds: number;
  width: number;
  height: number;
  codec: string;
}

export async function probeVideoFile(file: string, options: { signal?: AbortSignal; timeoutMs?: number; ffprobe?: string } = {}): Promise<ProbedVideo> {
  const binary = await locateEngine("ffprobe", options.ffprobe);
  const output = await runEngine(
    "ffprobe",
    binary,
    [
      "-v",
      "error",
      "-protocol_whitelist",
      "file",
      "-f",
      "mov",
      "-show_entries",
      "format=duration:stream=codec_type,codec_name,width,height,duration",
      "-of",
      "json",
      `file:${file}`,
    ],
    { signal: options.signal, timeoutMs: options.timeoutMs ?? 30_000, maxStdoutBytes: 1024 * 1024 },
  );
  let parsed: {
    format?: { duration?: string };
    streams?: Array<{ codec_type?: string; codec_name?: string; width?: number; height?: number; duration?: string }>;
  };
  try {
    parsed = JSON.parse(output.toString("utf8"));
  } catch {
    throw new AudioEngineError("failed", "ffprobe could not read the clip", { engine: "ffprobe" });
  }
  const video = parsed.streams?.find((stream) => stream.codec_type === "video");
  const duration = Number(parsed.format?.duration ?? video?.duration);
  if (!video || !Number.isFinite(duration) || duration <= 0) throw new AudioEngineError("failed", "the clip holds no video", { engine: "ffprobe" });
  return { durationSeconds: duration, width: video.width ?? 0, height: video.height ?? 0, codec: video.codec_name ?? "unknown" };
}
