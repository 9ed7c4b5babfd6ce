// The audio models in the config's catalog (docs/decisions.md §6): per speech and transcription
// model, which provider serves it, what it can do (its public catalog `constraints`: character cap,
// audio formats, response formats) and its price in credits. The built-in entries are in
// default-audio-models.ts; a config that lists `catalog.speech` or `catalog.transcription`
// replaces that list as a whole.
import { z } from "zod";
import { catalogEntryFields, uniqueIds } from "./catalog-entry-fields.js";

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

/** The formats the speech endpoints answer in. `pcm` is raw 16-bit little-endian mono samples. */
export const SPEECH_FORMATS = ["mp3", "wav", "opus", "flac", "pcm"] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export const TRANSCRIPT_FORMATS = ["json", "text", "verbose_json", "srt", "vtt"] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];
/** The formats that need time-bounded segments: a model yields all three or none. */
export const SEGMENT_FORMATS: readonly TranscriptFormat[] = ["verbose_json", "srt", "vtt"];

const commonFields = catalogEntryFields("an audio model id is <provider>/<model>", true);

export const speechModelSchema = z
  .object({
    ...commonFields,
    constraints: z
      .object({
        /** The most characters of `input` one call takes. */
        maxCharacters: positiveInt,
        /** Formats the endpoint answers in (the gateway converts what the vendor does not produce). */
        formats: z
          .array(z.enum(SPEECH_FORMATS))
          .min(1)
          .default([...SPEECH_FORMATS]),
        /** The vendor's fixed voices; empty: the provider lists them (an account's voices, the engine's). */
        voices: z.array(z.string().min(1)).default([]),
        /** The voice used when a request names none. */
        defaultVoice: z.string().min(1),
        speed: z.object({ min: z.number().positive(), max: z.number().positive() }).strict().default({ min: 0.25, max: 4 }),
      })
      .strict(),
    /** Credits (micro-dollars) per character of input. */
    pricing: z.object({ perCharacter: nonNegativeInt }).strict(),
  })
  .strict()
  .superRefine((model, context) => {
    const { voices, defaultVoice, speed } = model.constraints;
    if (voices.length > 0 && !voices.includes(defaultVoice)) {
      context.addIssue({ code: "custom", path: ["constraints", "defaultVoice"], message: `${defaultVoice} is not one of voices` });
    }
    if (speed.min > speed.max) context.addIssue({ code: "custom", path: ["constraints", "speed", "min"], message: "min is above max" });
  });

export const transcriptionModelSchema = z
  .object({
    ...commonFields,
    constraints: z
      .object({
        /** Response formats it can produce; verbose_json, srt and vtt need time-bounded segments. */
        responseFormats: z.array(z.enum(TRANSCRIPT_FORMATS)).min(1),
        /** Longest audio one call takes. */
        maxDurationSeconds: positiveInt,
        /** Largest upload the vendor takes (the gateway's own body limits apply as well). */
        maxBytes: positiveInt,
        /** Labels speakers in segments. */
        diarization: z.boolean().default(false),
      })
      .strict(),
    /** Credits (micro-dollars) per minute of audio, billed per started second. */
    pricing: z.object({ perMinute: nonNegativeInt }).strict(),
  })
  .strict()
  .superRefine((model, context) => {
    const formats = model.constraints.responseFormats;
    for (const required of ["json", "text"] as const) {
      if (!formats.includes(required))
        context.addIssue({ code: "custom", path: ["constraints", "responseFormats"], message: `every model answers ${required}` });
    }
    const segmentFormats = SEGMENT_FORMATS.filter((format) => formats.includes(format));
    if (segmentFormats.length !== 0 && segmentFormats.length !== SEGMENT_FORMATS.length) {
      context.addIssue({
        code: "custom",
        path: ["constraints", "responseFormats"],
        message: "verbose_json, srt and vtt come from the same segments: list all three or none",
      });
    }
  });

export const speechModelListSchema = uniqueIds(speechModelSchema, "speech");
export const transcriptionModelListSchema = uniqueIds(transcriptionModelSchema, "transcription");

export type SpeechModelInput = z.input<typeof speechModelSchema>;
export type SpeechModelEntry = z.output<typeof speechModelSchema>;
export type TranscriptionModelInput = z.input<typeof transcriptionModelSchema>;
export type TranscriptionModelEntry = z.output<typeof transcriptionModelSchema>;

/** Segments are needed for this format. */
export function needsSegments(format: TranscriptFormat): boolean {
  return SEGMENT_FORMATS.includes(format);
}
