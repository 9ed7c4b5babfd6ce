// What every chat-style call (chat completions, the messages endpoint) does around the upstream
// call: resolve the route candidates for the caller's plan, reserve an estimate of the credits
// (402 before any upstream call), and settle the real token usage into one usage row.
import type { PlanLimits } from "../../config/config-schema.js";
import type { Config } from "../../config/resolved-config.js";
import type { ChatUsage } from "../../providers/chat-types.js";
import type { Provider } from "../../providers/provider.js";
import type { Caller } from "../auth/key-authenticator.js";
import type { CreditLedger, Reservation } from "../billing/credit-ledger.js";
import { chatPricing, creditsForTokens, estimateTokens } from "../billing/pricing.js";
import type { LatencyTracker } from "../routing/latency-tracker.js";
import { resolveRoutes, type RouteCandidate } from "../routing/route-resolver.js";
import type { AttemptContext, AttemptTarget } from "./upstream-attempts.js";

export interface ChatMeteringDependencies {
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

export interface MeteredCall {
  candidates: RouteCandidate[];
  reservation: Reservation;
  started: number;
}

export class ChatMetering {
  constructor(readonly dependencies: ChatMeteringDependencies) {}

  /** Route and reserve. `promptText` and `maxOutputTokens` size the reservation. */
  begin(model: string, promptText: string, maxOutputTokens: number | null | undefined, context: ChatCallContext): MeteredCall {
    const config = this.dependencies.config();
    const candidates = resolveRoutes(config, model, { planName: context.caller.agent.plan, plan: context.plan, latency: this.dependencies.latency });
    const estimate = creditsForTokens(
      chatPricing(config, candidates[0]!.publicModel),
      { prompt_tokens: estimateTokens(promptText), completion_tokens: maxOutputTokens ?? config.billing.defaultReservedOutputTokens },
      config.billing.creditsPerUsd,
    );
    const reservation = this.dependencies.ledger.reserve(context.caller.agent.id, context.plan.monthlyCredits, estimate);
    return { candidates, reservation, started: performance.now() };
  }

  attempts(call: MeteredCall, context: ChatCallContext, supports: (provider: Provider) => boolean): AttemptContext {
    const config = this.dependencies.config();
    return {
      candidates: call.candidates,
      providers: this.dependencies.providers(),
      settings: (name: string) => ({ ...config.upstream, ...config.providers[name]?.upstream }),
      signal: context.signal,
      supports,
    };
  }

  /** The upstream answered: remember how fast, for low-latency routing. */
  answered(call: MeteredCall, target: AttemptTarget): void {
    this.dependencies.latency.record(target.candidate.provider, target.candidate.upstreamModel, performance.now() - call.started);
  }

  /** Write the usage row and release the reservation; resolves once the row is in the log. */
  async settle(call: MeteredCall, context: ChatCallContext, target: AttemptTarget, usage: ChatUsage): Promise<void> {
    const config = this.dependencies.config();
    const tokens = { prompt_tokens: usage.prompt_tokens ?? 0, completion_tokens: usage.completion_tokens ?? 0 };
    const units: Record<string, number> = { ...tokens };
    const cached = usage.prompt_tokens_details?.cached_tokens;
    if (typeof cached === "number" && cached > 0) units.cached_tokens = cached;
    await this.dependencies.ledger.settle(call.reservation, {
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

  /** The call failed before anything was produced: nothing is billed. */
  release(call: MeteredCall): void {
    this.dependencies.ledger.release(call.reservation);
  }
}

/** Usage from text lengths, for upstreams that report none and for streams cut short. */
export function estimateUsage(promptText: string, outputCharacters: number): ChatUsage {
  const prompt = estimateTokens(promptText);
  const completion = Math.ceil(outputCharacters / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
