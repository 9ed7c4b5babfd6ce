// Embeddings against Gemini: one text goes to `models/{model}:embedContent`, several to
// `:batchEmbedContents` (at most 100 a call, so larger lists take several calls, in order).
// `dimensions` becomes `outputDimensionality`; `user` has no Gemini counterpart and is dropped;
// token-id inputs cannot be sent (Gemini takes text). The answer is floats, with no token count:
// the gateway bills its own estimate.

import { requireJsonObject } from "../chat-answer.js";
import { type EmbeddingCallOptions, type EmbeddingCapability, embeddingInputs } from "../embedding-types.js";
import { requireFloats } from "../embedding-vectors.js";
import type { ProviderContext } from "../provider.js";
import { UnsupportedContentError, UpstreamNetworkError } from "../provider-errors.js";
import { readAs } from "../upstream-schema.js";
import { GeminiBatchEmbedAnswer, GeminiEmbedAnswer } from "./gemini-api.js";
import { geminiModelName, geminiModelPath, geminiRequest } from "./gemini-request.js";

/** Gemini refuses a batch of more requests than this. */
export const GEMINI_EMBED_BATCH_LIMIT = 100;

/** One EmbedContentRequest: the text as a single part. */
interface GeminiEmbedContentRequest {
  model?: string;
  content: { parts: Array<{ text: string }> };
  outputDimensionality?: number;
}

export function createGeminiEmbeddings(context: ProviderContext): EmbeddingCapability {
  const vendor = geminiRequest(context);

  async function call(model: string, method: string, json: object, { signal, firstByteTimeoutMs, deadline }: EmbeddingCallOptions): Promise<unknown> {
    const response = await vendor.send({ path: geminiModelPath(model, method), json, answer: "embeddings", signal, firstByteTimeoutMs, deadline });
    return requireJsonObject(context.name, await vendor.readJson(response, signal), `a ${method} answer`);
  }

  return {
    async embed(request, options) {
      const texts = textsOf(embeddingInputs(request.input));
      const embedRequest = (text: string): GeminiEmbedContentRequest => ({
        content: { parts: [{ text }] },
        ...(request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {}),
      });
      if (texts.length === 1) {
        const answer = readAs(GeminiEmbedAnswer, await call(request.model, "embedContent", embedRequest(texts[0] ?? ""), options));
        return { vectors: [requireFloats(context.name, answer?.embedding?.values, "embedding.values")] };
      }
      const vectors: number[][] = [];
      for (let start = 0; start < texts.length; start += GEMINI_EMBED_BATCH_LIMIT) {
        const batch = texts.slice(start, start + GEMINI_EMBED_BATCH_LIMIT);
        // Each request names the model too; Gemini requires it to be the one in the path.
        const requests = batch.map((text) => ({ model: geminiModelName(request.model), ...embedRequest(text) }));
        const answer = readAs(GeminiBatchEmbedAnswer, await call(request.model, "batchEmbedContents", { requests }, options));
        vectors.push(...batchVectors(context.name, answer?.embeddings, batch.length));
      }
      return { vectors };
    },
  };
}

function textsOf(inputs: string[] | number[][]): string[] {
  if (inputs.every((input): input is string => typeof input === "string")) return inputs;
  throw new UnsupportedContentError("Gemini embeds text: token-id inputs cannot be sent to it.", "input");
}

/** `embeddings[]`, in the order of the batch's requests: one for each. */
function batchVectors(provider: string, embeddings: ReadonlyArray<{ values?: unknown }> | undefined, count: number): number[][] {
  if (embeddings?.length !== count) {
    throw new UpstreamNetworkError(provider, "invalid_response", `the answer does not hold one embedding for each of the ${count} texts`);
  }
  return embeddings.map((embedding, index) => requireFloats(provider, embedding.values, `embeddings[${index}].values`));
}
