// POST /v1/chat/completions, as the domain sees it:
// route -> plan gate -> credit reservation -> upstream attempts -> settle usage -> respond.
import type { PlanLimits } from "../../config/config-schema.js";
import type { Config } from "../../config/resolved-config.js";
import type { ChatCompletion, ChatRequest, ChatStreamEvent, ChatUsage } from "../../providers/chat-types.js";
import type { Provider } from "../../providers/provider.js";
import { UpstreamNetworkError } from "../../providers/provider-errors.js";
import type { Caller } from "../auth/key-authenticator.js";
import type { CreditLedger, Reservation } from "../billing/credit-ledger.js";
import { chatPricing, creditsForTokens, estimateTokens } from "../billing/pricing.js";
import { resolveRoutes, type RouteCandidate } from "../routing/route-resolver.js";
import type { LatencyTracker } from "../routing/latency-tracker.js";
import type { ChatRequestBody } from "./chat-request.js";
import { StreamRelay } from "./stream-relay.js";
import { attemptInOrder, type AttemptTarget } from "./upstream-attempts.js";

export interface ChatServiceDependencies {
  config: () => Config;
  providers: () => ReadonlyMap<string, Provider>;
  ledger: CreditLedger;
  latency: LatencyTracker;
}

export interface ChatCallContext {
  caller: Caller;
  plan: PlanLimits;
  requestId: string;
  signal: AbortSignal;
  endpoint: string;
}

export interface CompletedChat {
  body: ChatCompletion;
  upstreamRequestId?: string;
}

export interface StreamingChat {
  /** Batches of chat.completion.chunk JSON texts; the usage chunk always comes last. */
  chunks: AsyncGenerator<string[]>;
  upstreamRequestId?: string;
}

export class ChatService {
  constructor(private readonly dependencies: ChatServiceDependencies) {}

  async complete(request: ChatRequestBody, context: ChatCallContext): Promise<CompletedChat> {
    const prepared = this.prepare(request, context);
    const started = performance.now();
    try {
      const { result, target } = await attemptInOrder(this.attemptContext(prepared.candidates, context), ({ candidate, provider }) =>
        provider.chat!.complete(upstreamRequest(request, candidate), { signal: context.signal }),
      );
      this.dependencies.latency.record(target.candidate.provider, target.candidate.upstreamModel, performance.now() - started);
      const body = result.body;
      body.model = target.candidate.publicModel;
      const usage = body.usage ?? estimateUsage(request, completionText(body).length);
      await this.settle(prepared.reservation, context, target, usage);
      return { body, upstreamRequestId: result.upstreamRequestId };
    } catch (error) {
      this.dependencies.ledger.release(prepared.reservation);
      throw error;
    }
  }

  async stream(request: ChatRequestBody, context: ChatCallContext): Promise<StreamingChat> {
    const prepared = this.prepare(request, context);
    const started = performance.now();
    try {
      // The first chunk is awaited inside the attempt: until it arrives nothing has reached the
      // client, so a failure before it can still be retried or sent to the next route.
      const { result, target } = await attemptInOrder(this.attemptContext(prepared.candidates, context), async ({ candidate, provider }) => {
        const response = await provider.chat!.stream(upstreamRequest(request, candidate), { signal: context.signal });
        const iterator = response.chunks[Symbol.asyncIterator]();
        const first = await iterator.next();
        if (first.done) throw new UpstreamNetworkError(candidate.provider, "invalid_response", "the stream ended before any chunk");
        return { iterator, first: first.value, upstreamRequestId: response.upstreamRequestId };
      });
      this.dependencies.latency.record(target.candidate.provider, target.candidate.upstreamModel, performance.now() - started);
      return {
        chunks: this.relay(result.first, result.iterator, request, context, target, prepared.reservation),
        upstreamRequestId: result.upstreamRequestId,
      };
    } catch (error) {
      this.dependencies.ledger.release(prepared.reservation);
      throw error;
    }
  }

  private prepare(request: ChatRequestBody, context: ChatCallContext): { candidates: RouteCandidate[]; reservation: Reservation } {
    const config = this.dependencies.config();
    const candidates = resolveRoutes(config, request.model, {
      planName: context.caller.agent.plan,
      plan: context.plan,
      latency: this.dependencies.latency,
    });
    const estimate = creditsForTokens(
      chatPricing(config, candidates[0]!.publicModel),
      {
        prompt_tokens: estimateTokens(JSON.stringify(request.messages)),
        completion_tokens: request.max_completion_tokens ?? request.max_tokens ?? config.billing.defaultReservedOutputTokens,
      },
      config.billing.creditsPerUsd,
    );
    const reservation = this.dependencies.ledger.reserve(context.caller.agent.id, context.plan.monthlyCredits, estimate);
    return { candidates, reservation };
  }

  private attemptContext(candidates: RouteCandidate[], context: ChatCallContext) {
    const config = this.dependencies.config();
    return {
      candidates,
      providers: this.dependencies.providers(),
      settings: (name: string) => ({ ...config.upstream, ...config.providers[name]?.upstream }),
      signal: context.signal,
      supports: (provider: Provider) => provider.chat !== undefined,
    };
  }

  /**
   * Forward chunks as they arrive (a batch per upstream read), naming the public model; end with
   * the usage chunk; bill exactly once, also when the client goes away or the upstream breaks.
   */
  private async *relay(
    first: ChatStreamEvent[],
    rest: AsyncIterator<ChatStreamEvent[]>,
    request: ChatRequestBody,
    context: ChatCallContext,
    target: AttemptTarget,
    reservation: Reservation,
  ): AsyncGenerator<string[]> {
    const relay = new StreamRelay(target.candidate.publicModel);
    try {
      let batch: ChatStreamEvent[] | undefined = first;
      while (batch) {
        yield batch.map((event) => relay.relay(event));
        const next: IteratorResult<ChatStreamEvent[]> = await rest.next();
        batch = next.done ? undefined : next.value;
      }
      if (!relay.usage) {
        // The upstream sent no usage (some compatible servers ignore include_usage): estimate it.
        relay.usage = estimateUsage(request, relay.producedCharacters);
        yield [JSON.stringify(relay.usageChunk(relay.usage))];
      }
    } finally {
      await rest.return?.();
      await this.settle(reservation, context, target, relay.usage ?? estimateUsage(request, relay.producedCharacters));
    }
  }

  private async settle(reservation: Reservation, context: ChatCallContext, target: AttemptTarget, usage: ChatUsage): Promise<void> {
    const config = this.dependencies.config();
    const tokens = { prompt_tokens: usage.prompt_tokens ?? 0, completion_tokens: usage.completion_tokens ?? 0 };
    const units: Record<string, number> = { ...tokens };
    const cached = usage.prompt_tokens_details?.cached_tokens;
    if (typeof cached === "number" && cached > 0) units.cached_tokens = cached;
    await this.dependencies.ledger.settle(reservation, {
      agent: context.caller.agent.id,
      keyPrefix: context.caller.key.prefix,
      endpoint: context.endpoint,
      model: target.candidate.publicModel,
      provider: target.candidate.provider,
      units,
      credits: creditsForTokens(chatPricing(config, target.candidate.publicModel), tokens, config.billing.creditsPerUsd),
      requestId: context.requestId,
    });
  }
}

function upstreamRequest(request: ChatRequestBody, candidate: RouteCandidate): ChatRequest {
  return { ...request, model: candidate.upstreamModel } as ChatRequest;
}

function completionText(body: ChatCompletion): string {
  return body.choices.map((choice) => JSON.stringify((choice as { message?: unknown }).message ?? "")).join("");
}

function estimateUsage(request: ChatRequestBody, outputCharacters: number): ChatUsage {
  const prompt = estimateTokens(JSON.stringify(request.messages));
  const completion = Math.ceil(outputCharacters / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
