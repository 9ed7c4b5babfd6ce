// POST /v1/embeddings, as the domain sees it: routed, gated and metered like chat (the same
// route candidates, plan gates, key limits, retries, fallback and circuit breakers through
// ChatMetering), to the providers that have the embeddings capability. The reservation is the
// inputs' token bound at the input price; the usage row bills the upstream's input tokens when
// they hold, else the gateway's estimate. Vectors reach the caller in the encoding it asked for,
// whatever the upstream answered in (docs/decisions.md §11).
import type { EmbeddingRequest, EmbeddingVector } from "../../providers/embedding-types.js";
import { base64ToFloats, floatsToBase64 } from "../../providers/embedding-vectors.js";
import type { Provider } from "../../providers/provider.js";
import { readEmbeddingUsage } from "../billing/token-usage.js";
import { InvalidRequestError } from "../errors.js";
import type { RouteCandidate } from "../routing/route-resolver.js";
import type { ChatCallContext, ChatMetering } from "../upstream-calls/chat-metering.js";
import type { AttemptTarget } from "../upstream-calls/upstream-attempts.js";
import { type EmbeddingInputSize, measureEmbeddingInput } from "./embedding-input-size.js";
import { planEmbeddingReservation } from "./embedding-reservation.js";
import type { EmbeddingsRequestBody, EmbeddingsResponseBody } from "./embeddings-request.js";

export interface CreatedEmbeddings {
  body: EmbeddingsResponseBody;
  upstreamRequestId?: string;
}

const supportsEmbeddings = (provider: Provider) => provider.embeddings !== undefined;

export class EmbeddingsService {
  constructor(private readonly metering: ChatMetering) {}

  async create(request: EmbeddingsRequestBody, context: ChatCallContext): Promise<CreatedEmbeddings> {
    // `auto` routes pick among chat models; an embedding model has to be named.
    if (request.model === "auto") {
      throw new InvalidRequestError("Embeddings need a named model (`auto` picks chat models), e.g. `openai/text-embedding-3-small`.", { param: "model" });
    }
    const size = measureEmbeddingInput(request.input);
    const call = await this.metering.beginWith(request.model, context, (config, candidates, remaining, limit) =>
      planEmbeddingReservation(config, candidates, size, remaining, limit),
    );
    return this.metering.run(call, context, {
      supports: supportsEmbeddings,
      // An answer over the size cap is billed what was held: the inputs' token bound.
      heldUnits: () => ({ input_tokens: size.tokenBound }),
      attempt: ({ candidate, provider, firstByteTimeoutMs, deadline }) => {
        if (!provider.embeddings) throw new Error(`provider ${provider.name} has no embeddings capability`);
        return provider.embeddings.embed(upstreamRequest(request, candidate), { signal: context.signal, firstByteTimeoutMs, deadline });
      },
      answered: async (result, target) => {
        const inputTokens = this.billedTokens(result.usage, size, target, context);
        const budget = call.budgets.get(target.candidate);
        if (!budget) throw new Error(`no reservation for route candidate ${target.candidate.provider}/${target.candidate.upstreamModel}`);
        await this.metering.record(call, context, target, { input_tokens: inputTokens }, budget.creditsFor(inputTokens));
        const body: EmbeddingsResponseBody = {
          object: "list",
          data: result.vectors.map((vector, index) => ({ object: "embedding", index, embedding: encoded(vector, request.encoding_format) })),
          model: target.candidate.publicModel,
          // The caller sees what was billed.
          usage: { prompt_tokens: inputTokens, total_tokens: inputTokens },
        };
        return { body, upstreamRequestId: result.upstreamRequestId };
      },
    });
  }

  /**
   * The upstream's input tokens when they hold: a count, and no more than the inputs can make
   * (the reservation's bound). Else, or when it sent none, the gateway's estimate.
   */
  private billedTokens(usage: unknown, size: EmbeddingInputSize, target: AttemptTarget, context: ChatCallContext): number {
    const reading = readEmbeddingUsage(usage);
    if ("counts" in reading && reading.counts.input <= size.tokenBound) return reading.counts.input;
    if (!("missing" in reading)) {
      const why = "invalid" in reading ? reading.invalid : `prompt_tokens ${reading.counts.input} is more than the inputs can hold (${size.tokenBound})`;
      this.metering.invalidUsage(context, target, why);
    }
    return size.tokenEstimate;
  }
}

function upstreamRequest(request: EmbeddingsRequestBody, candidate: RouteCandidate): EmbeddingRequest {
  const upstream: EmbeddingRequest = { model: candidate.upstreamModel, input: request.input, encoding: request.encoding_format };
  if (request.dimensions !== undefined) upstream.dimensions = request.dimensions;
  if (request.user !== undefined) upstream.user = request.user;
  return upstream;
}

/** The vector in the encoding the caller asked for: base64 is little-endian float32 bytes. */
function encoded(vector: EmbeddingVector, encoding: EmbeddingsRequestBody["encoding_format"]): number[] | string {
  if (encoding === "base64") return typeof vector === "string" ? vector : floatsToBase64(vector);
  return typeof vector === "string" ? base64ToFloats(vector) : vector;
}
