/**
 * POST /v1/embeddings of the fake OpenAI upstream (fakes/openai.ts), in OpenAI's wire format
 * (https://platform.openai.com/docs/api-reference/embeddings):
 *  - request {model, input: string | string[] | number[] | number[][], encoding_format float|base64,
 *    dimensions, user}; validated like the real API where it matters: known embedding models only
 *    (404 model_not_found otherwise), a present non-empty input of at most 2048 items, a known
 *    encoding, `dimensions` only for text-embedding-3 models and no longer than the model's.
 *  - answer {object: "list", data: [{object: "embedding", index, embedding}], model, usage:
 *    {prompt_tokens, total_tokens}}; base64 is the float32 values' little-endian bytes.
 *  - prompt_tokens: one per word of each text (at least one), one per token id.
 */
import { fakeEmbedding, seedOf } from "./embedding-vectors.js";

export const OPENAI_EMBEDDING_DIMENSIONS: Record<string, number> = {
  "text-embedding-3-small": 1536,
  "text-embedding-3-large": 3072,
  "text-embedding-ada-002": 1536,
};

export interface EmbeddingsBehaviour {
  usage?: { prompt_tokens: number }; // the prompt_tokens to report
  rawUsage?: unknown; // the usage object exactly as given
  omitUsage?: boolean; // no usage at all
  rawBody?: string; // this text as the 200 body, verbatim
}

export interface FakeAnswer {
  status: number;
  body: unknown;
}

const invalidInput = (): FakeAnswer =>
  apiError(400, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", "input", null);

function apiError(status: number, message: string, param: string | null, code: string | null): FakeAnswer {
  return { status, body: { error: { message, type: "invalid_request_error", param, code } } };
}

/** The inputs as a list, or undefined when `input` is none of OpenAI's four shapes. */
function inputList(input: unknown): Array<string | number[]> | undefined {
  const isTokens = (value: unknown): value is number[] => Array.isArray(value) && value.length > 0 && value.every((id) => Number.isInteger(id) && id >= 0);
  if (typeof input === "string") return input.length > 0 ? [input] : undefined;
  if (!Array.isArray(input) || input.length === 0 || input.length > 2048) return undefined;
  if (isTokens(input)) return [input];
  if (input.every((item) => typeof item === "string" && item.length > 0)) return input as string[];
  if (input.every(isTokens)) return input as number[][];
  return undefined;
}

function tokens(input: string | number[]): number {
  return typeof input === "string" ? Math.max(1, input.split(/\s+/).filter((word) => word.length > 0).length) : input.length;
}

export function answerEmbeddings(body: any, behaviour: EmbeddingsBehaviour): FakeAnswer {
  if (behaviour.rawBody !== undefined) return { status: 200, body: behaviour.rawBody };
  const model: string = body.model;
  const native = OPENAI_EMBEDDING_DIMENSIONS[model];
  if (native === undefined) return apiError(404, `The model \`${model}\` does not exist or you do not have access to it.`, null, "model_not_found");
  if (body.input === undefined) return apiError(400, "'input' is a required property", null, null);
  const inputs = inputList(body.input);
  if (!inputs) return invalidInput();
  const encoding = body.encoding_format ?? "float";
  if (encoding !== "float" && encoding !== "base64") {
    return apiError(400, `Invalid value for 'encoding_format': '${encoding}'. Supported values are: 'float' and 'base64'.`, "encoding_format", "invalid_value");
  }
  if (body.dimensions !== undefined && !model.startsWith("text-embedding-3")) {
    return apiError(400, "This model does not support specifying dimensions.", null, null);
  }
  const dimensions: number = body.dimensions ?? native;
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > native) {
    return apiError(400, `Invalid value for 'dimensions' = ${dimensions}. Must be between 1 and ${native}.`, "dimensions", "invalid_value");
  }
  const data = inputs.map((input, index) => {
    const values = fakeEmbedding(seedOf(input), dimensions);
    return { object: "embedding", index, embedding: encoding === "base64" ? base64Of(values) : values };
  });
  const promptTokens = behaviour.usage?.prompt_tokens ?? inputs.reduce((sum, input) => sum + tokens(input), 0);
  const answer: Record<string, unknown> = { object: "list", data, model };
  if (!behaviour.omitUsage) answer.usage = behaviour.rawUsage !== undefined ? behaviour.rawUsage : { prompt_tokens: promptTokens, total_tokens: promptTokens };
  return { status: 200, body: answer };
}

function base64Of(values: number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  for (const [index, value] of values.entries()) bytes.writeFloatLE(value, index * 4);
  return bytes.toString("base64");
}
