// The parts of OpenAI's answers gw reads (https://platform.openai.com/docs/api-reference), as
// lenient schemas: every field may be missing, null or of another type, and reads as absent then.
import { z } from "zod";
import { anyText, lenient } from "../upstream-schema.js";

/** Where OpenAI's API is; the configured base URL includes /v1 too. */
export const OPENAI_BASE_URL = "https://api.openai.com/v1";

/** An error answer: {error: {message, type, param, code}} (https://platform.openai.com/docs/guides/error-codes). */
export const OpenAIErrorBody = z.object({ error: z.object({ message: anyText, code: anyText }) });

/** An ImagesResponse (https://platform.openai.com/docs/api-reference/images/object). */
export const OpenAIImagesResponse = z.object({
  data: lenient(z.array(z.object({ b64_json: anyText, revised_prompt: anyText }).catch({}))),
  output_format: anyText,
  quality: anyText,
  usage: lenient(z.object({ input_tokens: lenient(z.number()), output_tokens: lenient(z.number()) })),
});
export type OpenAIImagesResponse = z.output<typeof OpenAIImagesResponse>;

const secondsValue = z.number().refine((value) => Number.isFinite(value) && value >= 0);
const seconds = lenient(secondsValue);

/** A transcription, json or verbose_json (https://platform.openai.com/docs/api-reference/audio/json-object). */
export const OpenAITranscription = z.object({
  text: z.string(),
  language: anyText,
  duration: seconds,
  segments: lenient(z.array(z.unknown())),
});

/** One verbose_json segment: times in seconds. */
export const OpenAITranscriptSegment = z.object({ start: secondsValue, end: secondsValue, text: z.string() });

/** A VideoResource (https://platform.openai.com/docs/api-reference/videos/object): submit's and poll's answer. */
export const OpenAIVideo = z.object({
  id: anyText,
  status: anyText,
  progress: lenient(z.number().refine(Number.isFinite)),
  error: lenient(z.object({ message: anyText, code: anyText })),
});

/** An embeddings list (https://platform.openai.com/docs/api-reference/embeddings/object): the vectors are checked by embedding-vectors.ts. */
export const OpenAIEmbeddingItem = z.object({ index: z.number().int().nonnegative(), embedding: lenient(z.unknown()) });
