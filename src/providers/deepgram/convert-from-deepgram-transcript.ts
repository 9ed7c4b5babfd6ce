// A Deepgram pre-recorded answer (https://developers.deepgram.com/docs/pre-recorded-audio) -> the vendor-neutral transcript.
// Segments are Deepgram's utterances; when an answer has none (a proxy that drops the parameter,
// a model without them), they are rebuilt from the words rather than failing the call.

import { isObject, type Json } from "../../json/json-values.js";
import type { Transcript, TranscriptSegment } from "../audio-types.js";
import { UpstreamNetworkError } from "../provider-errors.js";

/** A pause longer than this between two words starts a new segment. */
const MAX_PAUSE_SECONDS = 1;
/** A word that ends a sentence (closing quotes and brackets allowed after the mark). */
const SENTENCE_END = /[.?!]["'”’)\]]*$/;

export interface DeepgramWord {
  start: number;
  end: number;
  /** `punctuated_word` when Deepgram formatted it, else `word`. */
  text: string;
  speaker?: number;
}

export function convertFromDeepgramTranscript(provider: string, body: unknown, request: { segments: boolean; language?: string }): Transcript {
  const results = isObject(body) && isObject(body.results) ? body.results : undefined;
  const channel = Array.isArray(results?.channels) && isObject(results.channels[0]) ? results.channels[0] : undefined;
  const alternative = Array.isArray(channel?.alternatives) && isObject(channel.alternatives[0]) ? channel.alternatives[0] : undefined;
  if (!results || !channel || typeof alternative?.transcript !== "string") {
    throw new UpstreamNetworkError(provider, "invalid_response", "the answer has no results.channels[0].alternatives[0].transcript");
  }
  const transcript: Transcript = { text: alternative.transcript };
  const language = typeof channel.detected_language === "string" && channel.detected_language !== "" ? channel.detected_language : request.language;
  if (language !== undefined) transcript.language = language;
  const metadata = isObject(body) && isObject(body.metadata) ? body.metadata : {};
  if (isSeconds(metadata.duration)) transcript.durationSeconds = metadata.duration;
  if (typeof metadata.request_id === "string" && metadata.request_id !== "") transcript.upstreamRequestId = metadata.request_id;
  if (request.segments) {
    const utterances = Array.isArray(results.utterances) ? results.utterances : [];
    transcript.segments =
      utterances.length > 0 ? utterances.map((utterance, index) => segmentOf(provider, utterance, index)) : segmentsFromWords(wordsOf(alternative));
  }
  return transcript;
}

/** Consecutive words of one speaker, broken at sentence ends and at pauses over a second. */
export function segmentsFromWords(words: readonly DeepgramWord[]): TranscriptSegment[] {
  const segments: TranscriptSegment[] = [];
  let current: (TranscriptSegment & { ended: boolean }) | undefined;
  for (const word of words) {
    const continues = current && !current.ended && current.speaker === word.speaker && word.start - current.end <= MAX_PAUSE_SECONDS;
    if (current && continues) {
      current.end = word.end;
      current.text += ` ${word.text}`;
    } else {
      if (current) segments.push(withoutEnded(current));
      current = { start: word.start, end: word.end, text: word.text, ended: false };
      if (word.speaker !== undefined) current.speaker = word.speaker;
    }
    current.ended = SENTENCE_END.test(word.text);
  }
  if (current) segments.push(withoutEnded(current));
  return segments;
}

function withoutEnded({ ended: _ended, ...segment }: TranscriptSegment & { ended: boolean }): TranscriptSegment {
  return segment;
}

function segmentOf(provider: string, utterance: unknown, index: number): TranscriptSegment {
  if (!isObject(utterance) || !isSeconds(utterance.start) || !isSeconds(utterance.end) || typeof utterance.transcript !== "string") {
    throw new UpstreamNetworkError(provider, "invalid_response", `utterance ${index + 1} lacks start, end or transcript`);
  }
  const segment: TranscriptSegment = { start: utterance.start, end: utterance.end, text: utterance.transcript.trim() };
  const speaker = speakerOf(utterance.speaker);
  if (speaker !== undefined) segment.speaker = speaker;
  return segment;
}

/** The words that have times and text; a malformed one is left out rather than failing the call. */
function wordsOf(alternative: Json): DeepgramWord[] {
  const words: DeepgramWord[] = [];
  for (const item of Array.isArray(alternative.words) ? alternative.words : []) {
    if (!isObject(item) || !isSeconds(item.start) || !isSeconds(item.end)) continue;
    const text = typeof item.punctuated_word === "string" ? item.punctuated_word : item.word;
    if (typeof text !== "string" || text === "") continue;
    const word: DeepgramWord = { start: item.start, end: item.end, text };
    const speaker = speakerOf(item.speaker);
    if (speaker !== undefined) word.speaker = speaker;
    words.push(word);
  }
  return words;
}

/** Deepgram numbers speakers from 0; only with diarize=true. */
function speakerOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function isSeconds(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}
