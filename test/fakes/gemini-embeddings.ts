/**
 * `models/{model}:embedContent` and `:batchEmbedContents` of the fake Gemini upstream
 * (fakes/gemini.ts), in Gemini's wire format (https://ai.google.dev/api/embeddings):
 *  - embedContent {model?, content: {parts: [{text}]}, taskType?, title?, outputDimensionality?}
 *    -> {embedding: {values}}; batchEmbedContents {requests: [EmbedContentRequest]} ->
 *    {embeddings: [{values}]}, in request order. No token count, as the documented answer has none.
 *  - Validated like the real API where it matters: unknown fields refused ("Unknown name"), text
 *    parts only, a batch of 1 to 100 requests each naming the model of the path, an
 *    outputDimensionality between 1 and the model's length; an unknown model is 404.
 */
import { fakeEmbedding } from "./embedding-vectors.js";

export const GEMINI_EMBEDDING_DIMENSIONS: Record<string, number> = {
  "gemini-embedding-001": 3072,
  "text-embedding-004": 768,
};

const REQUEST_FIELDS = new Set(["model", "content", "taskType", "title", "outputDimensionality"]);

export type GeminiEmbedAnswer = { status: 200; body: unknown } | { status: 400 | 404; message: string };

class Refusal extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}

export function answerGeminiEmbeddings(model: string, method: "embedContent" | "batchEmbedContents", body: any): GeminiEmbedAnswer {
  try {
    const native = GEMINI_EMBEDDING_DIMENSIONS[model];
    if (native === undefined) throw new Refusal(404, `models/${model} is not found for API version v1beta, or is not supported for ${method}.`);
    if (method === "embedContent") return { status: 200, body: { embedding: { values: embed(body, native, "request") } } };
    if (!body || !Array.isArray(body.requests) || body.requests.length === 0)
      throw new Refusal(400, "* BatchEmbedContentsRequest.requests: requests is not specified");
    if (body.requests.length > 100) throw new Refusal(400, "* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch");
    const embeddings = body.requests.map((request: any, index: number) => {
      if (request?.model !== `models/${model}`) {
        throw new Refusal(400, `* BatchEmbedContentsRequest.requests[${index}].model: the model must be the batch's (models/${model})`);
      }
      return { values: embed(request, native, `requests[${index}]`) };
    });
    return { status: 200, body: { embeddings } };
  } catch (error) {
    if (error instanceof Refusal) return { status: error.status, message: error.message };
    throw error;
  }
}

function embed(request: any, native: number, path: string): number[] {
  if (!request || typeof request !== "object") throw new Refusal(400, `Invalid value at '${path}': expected an object`);
  for (const key of Object.keys(request)) {
    if (!REQUEST_FIELDS.has(key)) throw new Refusal(400, `Invalid JSON payload received. Unknown name "${key}" at '${path}': Cannot find field.`);
  }
  const parts = request.content?.parts;
  if (!Array.isArray(parts) || parts.length === 0) throw new Refusal(400, `* EmbedContentRequest.content: contents is not specified`);
  if (!parts.every((part: any) => typeof part?.text === "string")) throw new Refusal(400, `* EmbedContentRequest.content.parts: only text parts are counted`);
  const dimensions = request.outputDimensionality ?? native;
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > native) {
    throw new Refusal(400, `* EmbedContentRequest.output_dimensionality: must be between 1 and ${native}`);
  }
  return fakeEmbedding(parts.map((part: { text: string }) => part.text).join(""), dimensions);
}
