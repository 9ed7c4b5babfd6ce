// POST /v1/audio/speech and /v1/audio/synthesize: `input` required; `voice`, `format` (OpenAI's
// `response_format` is an alias), `speed`, `model` and `project_id` optional. Shapes are checked
// here; the caps that depend on the model (characters, voices, speed range, formats) are the
// service's, against the catalog.
import { z } from "zod";
import { SPEECH_FORMATS, type SpeechFormat } from "../../config/audio-catalog-schema.js";
import { InvalidRequestError } from "../errors.js";
import { parseWithSchema } from "../request-schema.js";

export interface SpeechBody {
  input: string;
  voice?: string;
  format: SpeechFormat;
  speed?: number;
  model?: string;
  project_id?: string;
}

/** The speed a caller may ask for, OpenAI's range (docs/decisions.md §7); a model may take less (its catalog entry says). */
export const SPEED_RANGE = { min: 0.25, max: 4 } as const;

export const speechRequestSchema = z
  .object({
    input: z.string().min(1, "the text to speak is empty"),
    voice: z.string().min(1).max(200).optional(),
    format: z.enum(SPEECH_FORMATS).optional(),
    response_format: z.enum(SPEECH_FORMATS).optional(),
    speed: z.unknown().optional(),
    model: z.string().min(1).optional(),
    project_id: z.string().min(1).optional(),
    // Sent by the official OpenAI SDK for some models; accepted and not used.
    instructions: z.string().optional(),
    stream_format: z.literal("audio").optional(),
  })
  .strict();

export function parseSpeechRequest(json: Record<string, unknown>): SpeechBody {
  const parsed = parseWithSchema(speechRequestSchema, json);
  if (parsed.format !== undefined && parsed.response_format !== undefined && parsed.format !== parsed.response_format) {
    throw new InvalidRequestError("`format` and `response_format` name different formats; send one.", { param: "format" });
  }
  const body: SpeechBody = { input: parsed.input, format: parsed.format ?? parsed.response_format ?? "mp3" };
  if (parsed.speed !== undefined && parsed.speed !== null) body.speed = checkSpeed(parsed.speed, SPEED_RANGE);
  if (parsed.voice !== undefined) body.voice = parsed.voice;
  if (parsed.model !== undefined) body.model = parsed.model;
  if (parsed.project_id !== undefined) body.project_id = parsed.project_id;
  return body;
}

/** A finite number within the range, else 400 invalid_speed naming it. */
export function checkSpeed(speed: unknown, range: { min: number; max: number }, model?: string): number {
  if (typeof speed !== "number" || !Number.isFinite(speed) || speed < range.min || speed > range.max) {
    const shown = typeof speed === "number" || typeof speed === "string" ? ` (${JSON.stringify(speed)} was sent)` : "";
    throw new InvalidRequestError(`\`speed\` must be a number from ${range.min} to ${range.max}${model ? ` for ${model}` : ""}${shown}.`, {
      param: "speed",
      code: "invalid_speed",
    });
  }
  return speed;
}
