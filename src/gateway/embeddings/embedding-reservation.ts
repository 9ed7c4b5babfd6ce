// How many credits an embeddings call may cost at most, before any upstream sees it: the inputs'
// token bound at each candidate's input price. Candidates are kept or refused as chat's are
// (billing/chat-reservation.ts): the first choice must fit, a fallback that does not is left out.
import type { Config } from "../../config/resolved-config.js";
import { type HeldTokens, planReservation, type ReservationPlan } from "../billing/chat-reservation.js";
import { creditsForTokens } from "../billing/pricing.js";
import type { RouteCandidate } from "../routing/route-resolver.js";
import type { EmbeddingInputSize } from "./embedding-input-size.js";
import { embeddingPricing } from "./embedding-price.js";

/** What the call may cost through one candidate. */
export interface EmbeddingBudget {
  /** Credits it can cost at most. */
  bound: number;
  /** The inputs' token bound (embeddings write no tokens). */
  heldTokens: HeldTokens;
  /** Credits for the input tokens it is billed. */
  creditsFor(inputTokens: number): number;
}

export function planEmbeddingReservation(
  config: Config,
  candidates: RouteCandidate[],
  size: EmbeddingInputSize,
  remaining: number,
  limit?: string,
): ReservationPlan<EmbeddingBudget> {
  return planReservation(candidates, remaining, limit, (candidate) => {
    const pricing = embeddingPricing(config, candidate);
    const creditsFor = (inputTokens: number) =>
      creditsForTokens(pricing, { input: inputTokens, cacheRead: 0, cacheWrite: 0, output: 0 }, config.billing.creditsPerUsd);
    const bound = creditsFor(size.tokenBound);
    if (bound <= remaining) return { fits: true, budget: { bound, heldTokens: { input: size.tokenBound, output: 0 }, creditsFor } };
    return { fits: false, bound, refusal: `it may cost up to ${bound} (at most ${size.tokenBound} input tokens)` };
  });
}
