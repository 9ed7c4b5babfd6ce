// Inbound POST /v1/embeddings request, OpenAI's shape: `input` a text, a list of texts, a list of
// token ids or a list of such lists (at most 2048 inputs, none empty, as OpenAI allows), `model`,
// `encoding_format` float (the default) or base64, `dimensions`, `user`. Any other field is a 400
// naming it, before anything is sent upstream. null stands for "not given", as OpenAI reads it.
import { z } from "zod";
import type { EmbeddingEncoding, EmbeddingInput } from "../../providers/embedding-types.js";
import { InvalidRequestError } from "../errors.js";
import { parseWithSchema } from "../request-schema.js";

/** OpenAI takes at most this many inputs in one request. */
export const MAX_EMBEDDING_INPUTS = 2048;

const text = z.string().min(1);
const tokenIds = z.array(z.number().int().nonnegative()).min(1);
const INPUT_SHAPES = `a non-empty string, a list of them, a list of token ids or a list of such lists (at most ${MAX_EMBEDDING_INPUTS} inputs)`;

export const embeddingsRequestSchema = z
  .object({
    model: z.string().min(1),
    input: z.union([text, z.array(text).min(1).max(MAX_EMBEDDING_INPUTS), tokenIds, z.array(tokenIds).min(1).max(MAX_EMBEDDING_INPUTS)], {
      error: `expected ${INPUT_SHAPES}`,
    }),
    encoding_format: z.enum(["float", "base64"]).nullish(),
    dimensions: z.number().int().positive().nullish(),
    user: z.string().nullish(),
  })
  .strict();

/** The request as a client may send it (the schema's input). */
export type EmbeddingsRequestInput = z.input<typeof embeddingsRequestSchema>;

/** The request as the service takes it: null fields gone, the encoding filled in. */
export interface EmbeddingsRequestBody {
  model: string;
  input: EmbeddingInput;
  encoding_format: EmbeddingEncoding;
  dimensions?: number;
  user?: string;
}

/** One vector of the answer: floats, or base64 of little-endian float32 bytes, by `encoding_format`. */
export interface EmbeddingObject {
  object: "embedding";
  index: number;
  embedding: number[] | string;
}

/** The POST /v1/embeddings answer, as OpenAI's. */
export interface EmbeddingsResponseBody {
  object: "list";
  data: EmbeddingObject[];
  model: string;
  /** Input tokens: the upstream's count, or the gateway's estimate when it gives none that holds. */
  usage: { prompt_tokens: number; total_tokens: number };
}

export function parseEmbeddingsRequest(json: Record<string, unknown>): EmbeddingsRequestBody {
  // zod reports an absent union as a bad value; say it is missing, as for any other field.
  if (json.input === undefined) throw new InvalidRequestError("Missing required parameter: 'input'.", { param: "input" });
  const parsed = parseWithSchema(embeddingsRequestSchema, json);
  const request: EmbeddingsRequestBody = { model: parsed.model, input: parsed.input, encoding_format: parsed.encoding_format ?? "float" };
  if (parsed.dimensions != null) request.dimensions = parsed.dimensions;
  if (parsed.user != null) request.user = parsed.user;
  return request;
}
