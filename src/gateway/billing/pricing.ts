// Prices chat usage in integer credits. Providers report tokens; only billing knows prices.
import type { Pricing } from "../../config/config-schema.js";
import type { TokenCounts } from "./token-usage.js";

/** USD per million tokens x tokens, summed: the cost before conversion to credits. */
export function tokenCost(pricing: Pricing, counts: TokenCounts): number {
  return (
    counts.input * pricing.input_per_mtok +
    counts.cacheRead * (pricing.cache_read_per_mtok ?? pricing.input_per_mtok) +
    counts.cacheWrite * (pricing.cache_write_per_mtok ?? pricing.input_per_mtok) +
    counts.output * pricing.output_per_mtok
  );
}

/** The dearest price an input token can have, since every one of them may turn out to be a cache write. */
export function dearestInputPrice(pricing: Pricing): number {
  return Math.max(pricing.input_per_mtok, pricing.cache_write_per_mtok ?? 0);
}

/** Credits for a token cost: USD per million tokens x tokens x credits per USD / 1e6, rounded up. */
export function creditsForCost(cost: number, creditsPerUsd: number): number {
  // Round up, forgiving float noise (3.0000000004 is 3, not 4).
  return Math.max(0, Math.ceil((cost * creditsPerUsd) / 1_000_000 - 1e-6));
}

export function creditsForTokens(pricing: Pricing, counts: TokenCounts, creditsPerUsd: number): number {
  return creditsForCost(tokenCost(pricing, counts), creditsPerUsd);
}
