// How many credits a chat call may cost at most, before any upstream sees it: the prompt's token
// bound at the dearest input price plus every output token the call may produce. The reservation
// holds that amount, so parallel requests can never together spend more than the balance.
//
// A request that names max_tokens is refused (402) when its worst case does not fit, saying which
// max_tokens would. A request that names none is sent with the max_tokens its balance can pay for
// (at most the model's output limit), and is refused the same way when that is below a useful
// answer (`billing.minimumAnswerTokens`): a truncated answer is not filled in.
// Whatever a candidate is sized for is its `bound`: the most its call is ever billed.

import type { ModelConfig, Pricing } from "../../config/config-schema.js";
import type { Config } from "../../config/resolved-config.js";
import { InsufficientCreditsError } from "../errors.js";
import type { RouteCandidate } from "../routing/route-resolver.js";
import type { ImageTokenRule } from "./image-tokens.js";
import { creditsForCost, dearestInputPrice } from "./pricing.js";
import { inputTokenBound, inputTokenEstimate, type PromptMeasure } from "./prompt-measure.js";

export interface ChatCallSize {
  prompt: PromptMeasure;
  /** The output cap the request named (the smallest of its cap fields), or undefined. */
  maxOutputTokens: number | undefined;
  /** Choices asked for (`n`): each may be as long as max_tokens. */
  choices: number;
}

/** The tokens a candidate's bound pays for: the most its call can have read and written. */
export interface HeldTokens {
  input: number;
  output: number;
}

/** What the call may cost through one candidate, and what it is billed when usage is missing. */
export interface CandidateBudget {
  pricing: Pricing;
  rule: ImageTokenRule;
  /** Credits this candidate can cost at most: what its call is billed at most. */
  bound: number;
  /** The output cap sent through this candidate: the request's, or the one filled in. */
  outputCap: number;
  /** The max_tokens gw sends for a request that named none. */
  filledMaxTokens?: number;
  /** The tokens `bound` pays for: the prompt's bound, and outputCap for each choice. */
  heldTokens: HeldTokens;
  /** Input tokens billed when the upstream reports no usage. */
  promptEstimate: number;
}

/** What a call reserves, and the candidates that reservation pays for. */
export interface ReservationPlan<Budget> {
  /** Candidates the balance can pay for, in order; the first is the request's own first choice. */
  candidates: RouteCandidate[];
  budgets: Map<RouteCandidate, Budget>;
  /** The largest bound among them: what is reserved. */
  amount: number;
}

export type ChatReservationPlan = ReservationPlan<CandidateBudget>;

/** One candidate's worst case against what the caller may spend. */
export type CandidateSizing<Budget> = { budget: Budget; fits: true } | { fits: false; refusal: string; bound: number };

/** `remaining` is what the caller may spend; `limit` names the limit it comes from, for the 402. */
export function planChatReservation(config: Config, candidates: RouteCandidate[], size: ChatCallSize, remaining: number, limit?: string): ChatReservationPlan {
  return planReservation(candidates, remaining, limit, (candidate) => sizeFor(config, candidate, size, remaining));
}

/**
 * Keep the candidates whose worst case the caller can pay and reserve the largest of them (chat,
 * embeddings: each endpoint sizes a candidate its own way).
 */
export function planReservation<Budget extends { bound: number }>(
  candidates: RouteCandidate[],
  remaining: number,
  limit: string | undefined,
  sizeFor: (candidate: RouteCandidate) => CandidateSizing<Budget>,
): ReservationPlan<Budget> {
  const budgets = new Map<RouteCandidate, Budget>();
  const kept: RouteCandidate[] = [];
  let amount = 0;
  for (const [index, candidate] of candidates.entries()) {
    const sizing = sizeFor(candidate);
    if (!sizing.fits) {
      // The request's own first choice decides; a fallback that cannot be paid for is left out.
      if (index === 0) throw new InsufficientCreditsError(Math.max(0, remaining), sizing.bound, sizing.refusal, limit);
      continue;
    }
    budgets.set(candidate, sizing.budget);
    kept.push(candidate);
    amount = Math.max(amount, sizing.budget.bound);
  }
  return { candidates: kept, budgets, amount };
}

function sizeFor(config: Config, candidate: RouteCandidate, size: ChatCallSize, remaining: number): CandidateSizing<CandidateBudget> {
  const model = config.models.find((entry) => entry.id === candidate.publicModel);
  const pricing = model?.pricing ?? config.billing.defaultChatPricing;
  const rule = imageRuleOf(config.providers[candidate.provider]?.type);
  const inputTokens = inputTokenBound(size.prompt, rule, candidate.upstreamModel);
  const inputCost = inputTokens * dearestInputPrice(pricing);
  const credits = (outputTokens: number) => creditsForCost(inputCost + outputTokens * size.choices * pricing.output_per_mtok, config.billing.creditsPerUsd);
  const promptEstimate = inputTokenEstimate(size.prompt, rule, candidate.upstreamModel);
  const affordable = affordableOutputTokens(remaining, inputCost, size.choices * pricing.output_per_mtok, config.billing.creditsPerUsd);

  const budget = (outputCap: number, filledMaxTokens?: number): CandidateBudget => ({
    pricing,
    rule,
    bound: credits(outputCap),
    outputCap,
    ...(filledMaxTokens !== undefined ? { filledMaxTokens } : {}),
    heldTokens: { input: inputTokens, output: outputCap * size.choices },
    promptEstimate,
  });
  const refusal = (outputCap: number, why: string): CandidateSizing<CandidateBudget> => {
    const advice = affordable >= 1 ? `a max_tokens of at most ${affordable} would fit` : `the prompt alone may cost up to ${credits(0)}`;
    const choices = size.choices > 1 ? ` for each of ${size.choices} choices` : "";
    return {
      fits: false,
      bound: credits(outputCap),
      refusal: `it may cost up to ${credits(outputCap)} (at most ${inputTokens} input tokens and max_tokens ${outputCap}${choices}${why}); ${advice}`,
    };
  };

  if (size.maxOutputTokens !== undefined) {
    return credits(size.maxOutputTokens) <= remaining ? { fits: true, budget: budget(size.maxOutputTokens) } : refusal(size.maxOutputTokens, "");
  }
  // Filled in only up to a useful answer: fewer tokens would truncate it (the model's own limit, when smaller, is enough).
  const limit = outputLimit(config, candidate, model, inputTokens);
  const floor = Math.min(config.billing.minimumAnswerTokens, limit);
  const filled = Math.min(limit, affordable);
  if (filled < floor) return refusal(floor, `, the fewest gw fills in when the request names none`);
  return { fits: true, budget: budget(filled, filled) };
}

/** The most output tokens that keep the call within `remaining` credits. */
function affordableOutputTokens(remaining: number, inputCost: number, outputPrice: number, creditsPerUsd: number): number {
  if (creditsForCost(inputCost, creditsPerUsd) > remaining) return 0;
  if (outputPrice === 0) return Number.MAX_SAFE_INTEGER;
  let tokens = Math.max(0, Math.floor((((remaining + 1e-6) * 1_000_000) / creditsPerUsd - inputCost) / outputPrice));
  // Float rounding may overshoot by one.
  while (tokens > 0 && creditsForCost(inputCost + tokens * outputPrice, creditsPerUsd) > remaining) tokens -= 1;
  return tokens;
}

/**
 * The model's output limit from the catalog (else the provider's default, else the billing
 * default), kept within the context window left after the prompt's bound when the catalog
 * knows the window: an upstream refuses a max_tokens that does not fit beside the prompt.
 */
function outputLimit(config: Config, candidate: RouteCandidate, model: ModelConfig | undefined, inputTokenBound: number): number {
  const limit = model?.max_output_tokens ?? config.providers[candidate.provider]?.defaultMaxTokens ?? config.billing.defaultMaxOutputTokens;
  const room = model ? model.context_length - inputTokenBound : Number.POSITIVE_INFINITY;
  return room >= TRUSTED_ROOM_TOKENS ? Math.min(limit, room) : limit;
}

/**
 * Less room than this after the prompt's bound (an over-estimate: a token per byte) is not taken
 * as the limit: the upstream, which counts the prompt's real tokens, says whether it fits.
 */
const TRUSTED_ROOM_TOKENS = 16;

/** Whose picture-token rule applies to a provider type; OpenAI's for every compatible server. */
export function imageRuleOf(providerType: string | undefined): ImageTokenRule {
  if (providerType === "anthropic") return "anthropic";
  if (providerType === "gemini") return "gemini";
  return "openai";
}
