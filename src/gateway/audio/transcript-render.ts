// A transcript in the format asked for: json `{model, text}`;
// verbose_json adds language, task, duration and the segments (speaker only when the vendor
// labelled one); text, srt and vtt are bodies of their own, rendered by the gateway from the
// segments so every provider that yields segments yields all five formats.
import type { TranscriptFormat } from "../../config/audio-catalog-schema.js";
import { renderSrt, renderWebVtt } from "../../media/subtitles.js";
import type { Transcript, TranscriptSegment } from "../../providers/audio-types.js";

export interface TranscriptSegmentBody {
  id: number;
  start: number;
  end: number;
  text: string;
  speaker?: number;
}

export interface TranscriptionJson {
  model: string;
  text: string;
}

export interface TranscriptionVerboseJson extends TranscriptionJson {
  language: string;
  task: "transcribe";
  duration: number;
  segments: TranscriptSegmentBody[];
}

export type RenderedTranscript = { kind: "json"; body: TranscriptionJson | TranscriptionVerboseJson } | { kind: "text"; body: string; contentType: string };

export const TRANSCRIPT_CONTENT_TYPES = {
  text: "text/plain; charset=utf-8",
  srt: "application/x-subrip; charset=utf-8",
  vtt: "text/vtt; charset=utf-8",
} as const;

export function renderTranscript(
  format: TranscriptFormat,
  transcript: Transcript & { segments: TranscriptSegment[] | undefined },
  facts: { model: string; durationSeconds: number; languageHint?: string },
): RenderedTranscript {
  const text = transcript.text.trim();
  const segments = (transcript.segments ?? []).filter((segment) => segment.text.trim() !== "");
  switch (format) {
    case "json":
      return { kind: "json", body: { model: facts.model, text } };
    case "verbose_json":
      return {
        kind: "json",
        body: {
          model: facts.model,
          text,
          language: transcript.language ?? facts.languageHint ?? "unknown",
          task: "transcribe",
          duration: Math.round(facts.durationSeconds * 1000) / 1000,
          segments: segments.map((segment, index) => segmentBody(segment, index)),
        },
      };
    case "text":
      return { kind: "text", body: text.length > 0 ? `${text}\n` : "", contentType: TRANSCRIPT_CONTENT_TYPES.text };
    case "srt":
      return { kind: "text", body: renderSrt(segments), contentType: TRANSCRIPT_CONTENT_TYPES.srt };
    case "vtt":
      return { kind: "text", body: renderWebVtt(segments), contentType: TRANSCRIPT_CONTENT_TYPES.vtt };
  }
}

function segmentBody(segment: TranscriptSegment, index: number): TranscriptSegmentBody {
  const body: TranscriptSegmentBody = {
    id: index,
    start: roundMs(segment.start),
    end: roundMs(Math.max(segment.end, segment.start)),
    text: segment.text.trim(),
  };
  if (segment.speaker !== undefined) body.speaker = segment.speaker;
  return body;
}

function roundMs(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
