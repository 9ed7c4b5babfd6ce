// POST /v1/audio/transcriptions, validated before anything is read or billed: the audio comes as
// exactly one of a multipart `file`, a JSON `mediaUrl` (fetched by the gateway through the
// SSRF-safe fetcher) or `mediaBase64`; `language` is a short hint; `response_format` one of the
// five (json by default); `model` is checked against the allowlist by the service.
import { z } from "zod";
import { TRANSCRIPT_FORMATS, type TranscriptFormat } from "../../config/audio-catalog-schema.js";
import type { Config } from "../../config/resolved-config.js";
import { InvalidRequestError } from "../errors.js";
import { parseWithSchema } from "../request-schema.js";

export type AudioSource =
  | { kind: "bytes"; bytes: Buffer; filename: string | undefined; mediaType: string | undefined; param: "file" }
  | { kind: "url"; url: string; param: "mediaUrl" }
  | { kind: "base64"; value: string; param: "mediaBase64" };

export interface TranscriptionBody {
  source: AudioSource;
  model?: string;
  language?: string;
  response_format: TranscriptFormat;
}

const SOURCE_FIELDS = "`file` (multipart), `mediaUrl` or `mediaBase64`";

export const transcriptionFieldsSchema = z.object({
  model: z.string().min(1).optional(),
  // OpenAI's own optional fields, which its SDK sends when asked: accepted so that code written
  // for OpenAI works unchanged, and not used (gw renders every format from the segments).
  prompt: z.string().max(4096).optional(),
  temperature: z.coerce.number().min(0).max(1).optional(),
  "timestamp_granularities[]": z.enum(["segment", "word"]).optional(),
  timestamp_granularities: z.array(z.enum(["segment", "word"])).optional(),
  language: z
    .string()
    .regex(/^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/, "a language code such as en or pt-BR")
    .optional(),
  response_format: z.enum(TRANSCRIPT_FORMATS).default("json"),
});

export const transcriptionJsonSchema = transcriptionFieldsSchema
  .extend({
    mediaUrl: z.string().min(1).max(8192).optional(),
    mediaBase64: z.string().min(1).optional(),
  })
  .strict();

/** The largest audio upload the gateway takes (multipart file or JSON base64): as large as a stored file (storage.maxFileBytes). */
export function maxAudioUploadBytes(config: Pick<Config, "storage">): number {
  return config.storage.maxFileBytes;
}

export function parseTranscriptionJson(json: Record<string, unknown>): TranscriptionBody {
  if ("file" in json)
    throw new InvalidRequestError(`Send \`file\` as a multipart/form-data part; a JSON body takes \`mediaUrl\` or \`mediaBase64\`.`, { param: "file" });
  const parsed = parseWithSchema(transcriptionJsonSchema, json);
  const given = [parsed.mediaUrl !== undefined, parsed.mediaBase64 !== undefined].filter(Boolean).length;
  if (given !== 1) throw exactlyOne(given);
  const source: AudioSource =
    parsed.mediaUrl !== undefined
      ? { kind: "url", url: parsed.mediaUrl, param: "mediaUrl" }
      : { kind: "base64", value: parsed.mediaBase64!, param: "mediaBase64" };
  return withFields(source, parsed);
}

/** The form's text fields (a repeated one counts by its last value) and its one `file` part. */
export function parseTranscriptionForm(form: {
  fields: Array<[string, string]>;
  files: Array<{ field: string; filename: string | undefined; contentType: string; bytes: Buffer }>;
}): TranscriptionBody {
  // Defined, not assigned: a field named `__proto__` stays a field (and is refused as unknown).
  const fields: Record<string, string> = Object.fromEntries(form.fields);
  const parts = form.files.filter((file) => file.field === "file");
  const others = form.files.filter((file) => file.field !== "file");
  if (others.length > 0)
    throw new InvalidRequestError(`Unexpected file part \`${others[0]!.field}\`: the audio goes in \`file\`.`, { param: others[0]!.field });
  const given = parts.length + (fields.mediaUrl !== undefined ? 1 : 0) + (fields.mediaBase64 !== undefined ? 1 : 0);
  if (given !== 1) throw exactlyOne(given);
  const { mediaUrl, mediaBase64, ...rest } = fields;
  const parsed = parseWithSchema(
    transcriptionFieldsSchema.extend({ mediaUrl: z.string().min(1).optional(), mediaBase64: z.string().min(1).optional() }).strict(),
    {
      ...rest,
      ...(mediaUrl !== undefined ? { mediaUrl } : {}),
      ...(mediaBase64 !== undefined ? { mediaBase64 } : {}),
    },
  );
  let source: AudioSource;
  if (parts.length === 1) {
    const part = parts[0]!;
    source = { kind: "bytes", bytes: part.bytes, filename: part.filename, mediaType: part.contentType, param: "file" };
  } else if (parsed.mediaUrl !== undefined) source = { kind: "url", url: parsed.mediaUrl, param: "mediaUrl" };
  else source = { kind: "base64", value: parsed.mediaBase64!, param: "mediaBase64" };
  return withFields(source, parsed);
}

/** Audio already in hand (a library file over MCP) with the JSON body's other fields. */
export function parseTranscriptionOfBytes(
  fields: Record<string, unknown>,
  file: { bytes: Buffer; filename: string | undefined; mediaType: string | undefined },
): TranscriptionBody {
  const parsed = parseWithSchema(transcriptionFieldsSchema.strict(), fields);
  return withFields({ kind: "bytes", ...file, param: "file" }, parsed);
}

function withFields(source: AudioSource, parsed: z.output<typeof transcriptionFieldsSchema>): TranscriptionBody {
  const body: TranscriptionBody = { source, response_format: parsed.response_format };
  if (parsed.model !== undefined) body.model = parsed.model;
  if (parsed.language !== undefined) body.language = parsed.language;
  return body;
}

function exactlyOne(given: number): InvalidRequestError {
  return new InvalidRequestError(
    given === 0 ? `Missing audio: send exactly one of ${SOURCE_FIELDS}.` : `Send exactly one of ${SOURCE_FIELDS}; ${given} were sent.`,
    { param: "file" },
  );
}
