// What every chat-style call (chat completions, the messages endpoint, embeddings) does around the
// upstream call: resolve the route candidates for the caller's plan, reserve the most the call can cost
// (402 before any upstream call), and settle the upstream's usage into one usage row, billed at
// most the bound of the candidate that served it. The key's tokens per minute are told the row's
// tokens, at most those the candidate held (docs/decisions.md §10).

import { type PlanLimits, upstreamSettingsFor } from "../../config/config-schema.js";
import type { Config } from "../../config/resolved-config.js";
import type { Provider } from "../../providers/provider.js";
import type { UsageRow } from "../../store/usage-log.js";
import type { Caller } from "../auth/key-authenticator.js";
import { assertKeyAllowsModel } from "../auth/key-limits.js";
import type { DeferredAdmission } from "../auth/rate-limiter.js";
import { type CandidateBudget, type ChatCallSize, type HeldTokens, planChatReservation, type ReservationPlan } from "../billing/chat-reservation.js";
import type { Reservation } from "../billing/credit-ledger.js";
import { creditsForTokens } from "../billing/pricing.js";
import { estimateTextTokens } from "../billing/prompt-measure.js";
import { type TokenCounts, totalInput, type UsageReading } from "../billing/token-usage.js";
import { usageEntry } from "../billing/usage-entry.js";
import { type RouteCandidate, resolveRoutes } from "../routing/route-resolver.js";
import type { ServiceContext } from "../service-context.js";
import { AnswerSizeWatch } from "./answer-size-watch.js";
import { type Attempt, type AttemptContext, type AttemptTarget, attemptInOrder, attemptReports } from "./upstream-attempts.js";

export interface ChatCallContext {
  caller: Caller;
  plan: PlanLimits;
  requestId: string;
  signal: AbortSignal;
  endpoint: string;
  /** The request's rate take, when its route left it for the credit hold to make (auth/rate-limiter.ts). */
  admission?: DeferredAdmission;
  /** Told of each usage row the call writes (the response cache keeps what an answer cost). */
  recorded?: (row: UsageRow) => void;
  /** A batch's line (gateway/batches/): its row is named in advance and priced at the batch rate. */
  batch?: BatchLineBilling;
  /** The request's tags, on each of its usage rows (gateway/request-tags.ts). */
  tags?: readonly string[];
  /**
   * A streamed call's chunks go to a converter (the Responses stream), not to the client: the
   * relay leaves the upstream's model name in them, since the converter names the model itself.
   */
  chunksConverted?: boolean;
}

export interface BatchLineBilling {
  /** The batch's id, on the usage row. */
  id: string;
  /** The row's id, named before the call, so a restart can tell whether the line was billed. */
  rowId: string;
  /** What a line costs as a share of a live call's price (1 - billing.batchDiscount). */
  priceFactor: number;
}

/** What a call may cost through each candidate, given what the caller may spend (`limit` names that limit, for the 402). */
export type ReservationPlanner<Budget> = (config: Config, candidates: RouteCandidate[], remaining: number, limit: string) => ReservationPlan<Budget>;

/** Every candidate's sizing has a bound, the most its call is billed, and the tokens that bound pays for. */
export type Bounded = { bound: number; heldTokens: HeldTokens };

export interface MeteredCall<Budget extends Bounded = CandidateBudget> {
  candidates: RouteCandidate[];
  budgets: Map<RouteCandidate, Budget>;
  reservation: Reservation;
  started: number;
}

/** What one attempt tells its provider (ChatMetering.callOptions). */
export interface ChatAttemptOptions {
  signal: AbortSignal;
  firstByteTimeoutMs: number;
  deadline: number;
  maxOutputTokens: number;
}

/** Text relayed to the client, for billing a call whose upstream reported no usage. */
export interface RelayedText {
  characters: number;
  bytes: number;
}

export class ChatMetering {
  constructor(
    private readonly shared: ServiceContext,
    /** Told of the tokens a call counts against its key's tokens per minute, once its row is written. */
    private readonly tokensUsed?: (keyPrefix: string, tokens: number) => void,
  ) {}

  /** Route and reserve the call's worst case for the caller's balance. */
  begin(model: string, size: ChatCallSize, context: ChatCallContext): Promise<MeteredCall> {
    return this.beginWith(model, context, (config, candidates, remaining, limit) => planChatReservation(config, candidates, size, remaining, limit));
  }

  /** Route and reserve what `plan` says the call may cost at most (another endpoint's sizing than chat's). */
  async beginWith<Budget extends Bounded>(model: string, context: ChatCallContext, plan: ReservationPlanner<Budget>): Promise<MeteredCall<Budget>> {
    const started = performance.now();
    const config = this.shared.config();
    const { ledger } = this.shared;
    assertKeyAllowsModel(context.caller.key, model);
    const routed = resolveRoutes(config, model, { planName: context.caller.agent.plan, plan: context.plan, latency: this.shared.latency });
    const { planned, reservation } = await ledger.reservePlanned(context, (remaining, limit) => plan(config, routed, remaining, limit), context.admission);
    return { candidates: planned.candidates, budgets: planned.budgets, reservation, started };
  }

  /**
   * Make the metered call: its candidates tried in order (retries, circuit breakers, one deadline),
   * the serving upstream's latency recorded, then `answered` (which settles). When anything fails,
   * on the way or in `answered`: an answer cut at its size cap is billed what its candidate held
   * (`heldUnits`), anything else released (ChatMetering.failed).
   */
  async run<Budget extends Bounded, Result, Answer>(
    call: MeteredCall<Budget>,
    context: ChatCallContext,
    how: {
      supports: (provider: Provider) => boolean;
      heldUnits: (budget: Budget) => Record<string, number>;
      attempt: (target: Attempt) => Promise<Result>;
      answered: (result: Result, target: AttemptTarget) => Promise<Answer>;
    },
  ): Promise<Answer> {
    const size = new AnswerSizeWatch();
    try {
      const { result, target } = await attemptInOrder(this.attempts(call, context, how.supports), size.watch(how.attempt));
      this.answered(call, target);
      return await how.answered(result, target);
    } catch (error) {
      await this.failed(call, context, size, how.heldUnits);
      throw error;
    }
  }

  private attempts(call: MeteredCall<Bounded>, context: ChatCallContext, supports: (provider: Provider) => boolean): AttemptContext {
    const config = this.shared.config();
    return {
      candidates: call.candidates,
      providers: this.shared.providers(),
      settings: (name: string) => upstreamSettingsFor(config, name),
      signal: context.signal,
      supports,
      breakers: this.shared.breakers,
      started: call.started,
      ...attemptReports(this.shared, context.requestId),
    };
  }

  /**
   * What an attempt of a chat-style call tells its provider: the caller's abort signal, the
   * attempt's share of the deadline, and the one output cap its credits were reserved for.
   */
  callOptions(call: MeteredCall, attempt: Attempt, context: ChatCallContext): ChatAttemptOptions {
    const { firstByteTimeoutMs, deadline } = attempt;
    return { signal: context.signal, firstByteTimeoutMs, deadline, maxOutputTokens: this.outputCap(call, attempt.candidate) };
  }

  /** The max_tokens gw sends through this candidate, when the request named none. */
  filledMaxTokens(call: MeteredCall, candidate: RouteCandidate): number | undefined {
    return call.budgets.get(candidate)?.filledMaxTokens;
  }

  /** The one output cap sent through this candidate (the providers write it in their field): what its credits were reserved for. */
  outputCap(call: MeteredCall, candidate: RouteCandidate): number {
    return budgetOf(call, candidate).outputCap;
  }

  /** The upstream answered: remember how fast, for low-latency routing. */
  private answered(call: MeteredCall<Bounded>, target: AttemptTarget): void {
    this.shared.latency.record(target.candidate.provider, target.candidate.upstreamModel, performance.now() - call.started);
  }

  /**
   * Write the usage row and release the reservation; resolves once the row is in the log. The
   * upstream's usage when it is valid; else the prompt's estimate plus the text relayed.
   */
  async settle(call: MeteredCall, context: ChatCallContext, target: AttemptTarget, usage: UsageReading, relayed: RelayedText): Promise<UsageRow> {
    const config = this.shared.config();
    const budget = budgetOf(call, target.candidate);
    if ("invalid" in usage) this.invalidUsage(context, target, usage.invalid);
    const counts: TokenCounts =
      "counts" in usage
        ? usage.counts
        : { input: budget.promptEstimate, cacheRead: 0, cacheWrite: 0, output: estimateTextTokens(relayed.characters, relayed.bytes) };
    return this.record(call, context, target, usageUnits(counts), creditsForTokens(budget.pricing, counts, config.billing.creditsPerUsd));
  }

  /**
   * A stream's one settle, once its upstream stream is closed: cut off at the size cap, it produced
   * more than was relayed and is billed what was held; else what was relayed, whose row is
   * returned (its credits go into the stream's usage event: docs/decisions.md §24).
   */
  async settleStream(
    call: MeteredCall,
    context: ChatCallContext,
    target: AttemptTarget,
    upstream: AsyncIterator<unknown>,
    usage: UsageReading,
    relayed: RelayedText,
    size: AnswerSizeWatch,
  ): Promise<UsageRow | undefined> {
    await upstream.return?.();
    if (size.tooLarge) {
      await this.failed(call, context, size, heldChatUnits);
      return undefined;
    }
    return this.settle(call, context, target, usage, relayed);
  }

  /** The upstream's usage was not believed: say so in the log (the gateway's estimate is billed). */
  invalidUsage(context: ChatCallContext, target: Pick<AttemptTarget, "candidate">, why: string): void {
    this.shared.warn(`${target.candidate.provider} reported invalid usage for request ${context.requestId} (${why}); billed the gateway's estimate`);
  }

  /**
   * Write the call's usage row (these units, these credits, at most the serving candidate's
   * bound) and release the reservation; resolves once the row is in the log.
   */
  async record(
    call: MeteredCall<Bounded>,
    context: ChatCallContext,
    target: Pick<AttemptTarget, "candidate">,
    units: Record<string, number>,
    credits: number,
  ): Promise<UsageRow> {
    const budget = budgetOf(call, target.candidate);
    const entry = usageEntry(context, { endpoint: context.endpoint, model: target.candidate.publicModel, provider: target.candidate.provider, units, credits });
    const { batch } = context;
    if (batch) {
      entry.credits = Math.round(credits * batch.priceFactor);
      entry.batch = batch.id;
    }
    const row = await this.shared.ledger.settle(call.reservation, entry, { bound: budget.bound, rowId: batch?.rowId });
    context.recorded?.(row);
    // Only a key with a tokens-per-minute limit has a token bucket to count them in (on Redis, a script saved).
    if (context.caller.key.tpm !== undefined) this.tokensUsed?.(context.caller.key.prefix, countedTokens(units, budget.heldTokens));
    return row;
  }

  /** The call failed before anything was produced: nothing is billed. */
  release(call: MeteredCall<Bounded>): void {
    this.shared.ledger.release(call.reservation);
  }

  /**
   * The call failed. An answer that passed the size cap (answer_too_large) was produced, and paid
   * for upstream: it is billed what the candidate that served it held, as `units` (what that bound
   * pays for). Any other failure produced nothing: released, nothing billed. Resolves once settled.
   */
  async failed<Budget extends Bounded>(
    call: MeteredCall<Budget>,
    context: ChatCallContext,
    watch: AnswerSizeWatch,
    units: (budget: Budget) => Record<string, number>,
  ): Promise<void> {
    const candidate = watch.tooLarge;
    if (!candidate) return this.release(call);
    const budget = budgetOf(call, candidate);
    await this.record(call, context, { candidate }, units(budget), budget.bound);
  }
}

/** What a chat call's bound pays for: the prompt's token bound and the output cap of every choice. */
export function heldChatUnits(budget: CandidateBudget): Record<string, number> {
  return { prompt_tokens: budget.heldTokens.input, completion_tokens: budget.heldTokens.output };
}

/**
 * The tokens a call counts against its key's tokens per minute: the row's input and output, each
 * at most what the candidate held. The row keeps what the upstream reported; an upstream that
 * reports 100 million tokens must not lock the key for days over tokens the call could not use.
 */
function countedTokens(units: Record<string, number>, held: HeldTokens): number {
  const input = (units.prompt_tokens ?? 0) + (units.input_tokens ?? 0);
  const output = units.completion_tokens ?? 0;
  return Math.min(input, held.input) + Math.min(output, held.output);
}

function budgetOf<Budget extends Bounded>(call: MeteredCall<Budget>, candidate: RouteCandidate): Budget {
  const budget = call.budgets.get(candidate);
  // Attempts only ever go to candidates the reservation sized.
  if (!budget) throw new Error(`no reservation for route candidate ${candidate.provider}/${candidate.upstreamModel}`);
  return budget;
}

/** The size of text relayed to the client, for the estimate. */
export function textSize(text: string): RelayedText {
  return { characters: text.length, bytes: Buffer.byteLength(text) };
}

/** The usage the client sees when the upstream sent none (or sent nonsense): the gateway's estimate. */
export function estimatedChatUsage(
  call: MeteredCall,
  target: AttemptTarget,
  relayed: RelayedText,
): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  const prompt = budgetOf(call, target.candidate).promptEstimate;
  const completion = estimateTextTokens(relayed.characters, relayed.bytes);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function usageUnits(counts: TokenCounts): Record<string, number> {
  const units: Record<string, number> = { prompt_tokens: totalInput(counts), completion_tokens: counts.output };
  if (counts.cacheRead > 0) units.cached_tokens = counts.cacheRead;
  if (counts.cacheWrite > 0) units.cache_write_tokens = counts.cacheWrite;
  return units;
}
