// The parts of ElevenLabs' bodies gw reads (https://elevenlabs.io/docs/api-reference), as lenient schemas: every
// field may be missing or of another type, and reads as absent then.
import { z } from "zod";
import { anyText, lenient } from "../upstream-schema.js";

/** Where ElevenLabs' API is: the origin, every path under /v1. */
export const ELEVENLABS_BASE_URL = "https://api.elevenlabs.io";

/** An error body: {detail: "..."}, {detail: {status, message}}, or FastAPI's validation list {detail: [{loc, msg, type}]} (422). */
export const ElevenLabsErrorBody = z.object({
  detail: lenient(z.union([z.string().min(1), z.object({ status: anyText, message: z.string() }), z.array(z.unknown())])),
});

/** One voice of GET /v1/voices. */
export const ElevenLabsVoice = z.object({
  voice_id: z.string().min(1),
  name: lenient(z.string().min(1)),
  labels: lenient(z.object({ language: lenient(z.string().min(1)) })),
  verified_languages: lenient(z.array(z.unknown())),
  verbose_languages: lenient(z.array(z.unknown())),
});
export type ElevenLabsVoice = z.output<typeof ElevenLabsVoice>;

/** GET /v1/voices: {voices: [...]}; a voice that does not fit is skipped. */
export const ElevenLabsVoices = z.object({ voices: z.array(z.unknown()) });
