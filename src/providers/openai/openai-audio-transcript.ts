// Vendor-neutral transcription requests <-> OpenAI's /audio/transcriptions (https://platform.openai.com/docs/api-reference/audio/createTranscription).
// Segments come only with verbose_json (segment granularity); json is the one format every
// OpenAI transcription model and every compatible Whisper server answers.

import type { Transcript, TranscriptionRequest, TranscriptSegment } from "../audio-types.js";
import type { MultipartPart } from "../multipart-body.js";
import { UnsupportedContentError, UpstreamNetworkError } from "../provider-errors.js";
import { readAs } from "../upstream-schema.js";
import { OpenAITranscription, OpenAITranscriptSegment } from "./openai-api.js";

/** What OpenAI's transcription endpoint reads (flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav, webm). */
const OPENAI_AUDIO_TYPES = new Set(["audio/flac", "audio/mpeg", "audio/mp4", "audio/ogg", "audio/wav", "audio/webm"]);

export function convertToOpenAITranscription(request: TranscriptionRequest): MultipartPart[] {
  const { audio } = request;
  if (!OPENAI_AUDIO_TYPES.has(audio.mediaType)) {
    throw new UnsupportedContentError(`${audio.mediaType} audio is not read by OpenAI's transcription; send flac, mp3, mp4/m4a, ogg, wav or webm`, "file");
  }
  const parts: MultipartPart[] = [
    // OpenAI sniffs the format from the file name's extension and the part's content type.
    { name: "file", filename: audio.filename, contentType: audio.mediaType, bytes: audio.bytes },
    { name: "model", value: request.model },
  ];
  if (request.language !== undefined) parts.push({ name: "language", value: request.language });
  if (request.segments) {
    parts.push({ name: "response_format", value: "verbose_json" });
    parts.push({ name: "timestamp_granularities[]", value: "segment" });
  } else {
    parts.push({ name: "response_format", value: "json" });
  }
  return parts;
}

/** A json or verbose_json answer; `usage` is read by no one (the gateway bills by duration). */
export function convertFromOpenAITranscription(provider: string, body: unknown, segmentsWanted: boolean): Transcript {
  const answer = readAs(OpenAITranscription, body);
  if (!answer) throw new UpstreamNetworkError(provider, "invalid_response", "the transcription has no text");
  const transcript: Transcript = { text: answer.text };
  if (answer.language) transcript.language = answer.language;
  if (answer.duration !== undefined) transcript.durationSeconds = answer.duration;
  // Absent segments stay absent: the gateway, not the adapter, decides what a missing list means.
  if (segmentsWanted && answer.segments) transcript.segments = answer.segments.map((segment, index) => segmentOf(provider, segment, index));
  return transcript;
}

function segmentOf(provider: string, segment: unknown, index: number): TranscriptSegment {
  const read = readAs(OpenAITranscriptSegment, segment);
  if (!read) throw new UpstreamNetworkError(provider, "invalid_response", `segment ${index + 1} lacks start, end or text`);
  // Whisper puts a space before each segment's text.
  return { start: read.start, end: read.end, text: read.text.trim() };
}
