// Embeddings against OpenAI and every compatible server: POST {baseUrl}/embeddings with the
// request as OpenAI takes it. The answer's vectors are checked and put in input order (`index`);
// an error answer is left as the upstream sent it (redacted), like chat's.
import { requireJsonObject } from "../chat-answer.js";
import { type EmbeddingCapability, type EmbeddingVector, embeddingInputs } from "../embedding-types.js";
import { requireVector } from "../embedding-vectors.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { readAs } from "../upstream-schema.js";
import { OpenAIEmbeddingItem } from "./openai-api.js";
import { openaiRequest } from "./openai-request.js";

export function createOpenAIEmbeddings(context: ProviderContext): EmbeddingCapability {
  const vendor = openaiRequest(context);

  return {
    async embed(request, { signal, firstByteTimeoutMs, deadline }) {
      const json = {
        model: request.model,
        input: request.input,
        encoding_format: request.encoding,
        ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
        ...(request.user !== undefined ? { user: request.user } : {}),
      };
      // The error answer is already OpenAI's: passed on as it came, like chat's.
      const response = await vendor.send({ path: "/embeddings", json, answer: "embeddings", signal, firstByteTimeoutMs, deadline, mapError: false });
      const answer = requireJsonObject(context.name, await vendor.readJson(response, signal), "an embeddings list");
      return {
        vectors: vectorsInOrder(context.name, answer.data, embeddingInputs(request.input).length),
        usage: answer.usage,
        upstreamRequestId: vendor.requestId(response),
      };
    },
  };
}

/** `data[]` by `index`: exactly one vector for each input. */
function vectorsInOrder(provider: string, data: unknown, inputs: number): EmbeddingVector[] {
  if (!Array.isArray(data) || data.length !== inputs) {
    throw new UpstreamNetworkError(provider, "invalid_response", `the answer does not hold one embedding for each of the ${inputs} inputs`);
  }
  const vectors = new Array<EmbeddingVector | undefined>(inputs);
  data.forEach((item: unknown, position) => {
    const read = readAs(OpenAIEmbeddingItem, item);
    if (!read || read.index >= inputs || vectors[read.index] !== undefined) {
      throw new UpstreamNetworkError(provider, "invalid_response", `data[${position}] has no index of its own between 0 and ${inputs - 1}`);
    }
    vectors[read.index] = requireVector(provider, read.embedding, `data[${position}].embedding`);
  });
  return vectors as EmbeddingVector[];
}
