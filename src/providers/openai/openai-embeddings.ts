// Embeddings against OpenAI and every compatible server: POST {baseUrl}/embeddings with the
// request as OpenAI takes it. The answer's vectors are checked and put in input order (`index`);
// an error answer is left as the upstream sent it (redacted), like chat's.
import { upstreamRequestIdOf, upstreamTarget } from "../../net/upstream-http.js";
import { requireJsonObject } from "../chat-answer.js";
import { type EmbeddingCapability, type EmbeddingVector, embeddingInputs } from "../embedding-types.js";
import { requireVector } from "../embedding-vectors.js";
import { isObject } from "../openai-message-parts.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { readRedactedJson } from "../sse.js";

export function createOpenAIEmbeddings(context: ProviderContext): EmbeddingCapability {
  const baseUrl = (context.config.baseUrl ?? "https://api.openai.com/v1").replace(/\/+$/, "");
  const target = upstreamTarget(`${baseUrl}/embeddings`);
  const headers: Record<string, string> = { "content-type": "application/json", ...context.config.headers };
  if (context.config.apiKey) headers.authorization = `Bearer ${context.config.apiKey}`;

  return {
    async embed(request, { signal, firstByteTimeoutMs, deadline }) {
      const body = JSON.stringify({
        model: request.model,
        input: request.input,
        encoding_format: request.encoding,
        ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
        ...(request.user !== undefined ? { user: request.user } : {}),
      });
      const response = await context.http.send(
        { provider: context.name, target, headers, body, signal, firstByteTimeoutMs, deadline, answer: "embeddings", redact: context.redact },
        context.upstream,
      );
      const answer = requireJsonObject(context.name, await readRedactedJson(context, response, signal), "an embeddings list");
      return {
        vectors: vectorsInOrder(context.name, answer.data, embeddingInputs(request.input).length),
        usage: answer.usage,
        upstreamRequestId: upstreamRequestIdOf(response.headers, "x-request-id", context.redact),
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
    const index = isObject(item) ? item.index : undefined;
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= inputs || vectors[index] !== undefined) {
      throw new UpstreamNetworkError(provider, "invalid_response", `data[${position}] has no index of its own between 0 and ${inputs - 1}`);
    }
    vectors[index] = requireVector(provider, (item as { embedding?: unknown }).embedding, `data[${position}].embedding`);
  });
  return vectors as EmbeddingVector[];
}
