// Prices chat usage in integer credits. Providers report tokens; only billing knows prices.
import type { Config } from "../../config/resolved-config.js";
import type { Pricing } from "../../config/config-schema.js";

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export function chatPricing(config: Pick<Config, "models" | "billing">, publicModel: string): Pricing {
  return config.models.find((model) => model.id === publicModel)?.pricing ?? config.billing.defaultChatPricing;
}

/** Credits for a token count: USD per million tokens x credits per USD / 1e6, rounded up. */
export function creditsForTokens(pricing: Pricing, usage: TokenUsage, creditsPerUsd: number): number {
  const usd = (usage.prompt_tokens * pricing.input_per_mtok + usage.completion_tokens * pricing.output_per_mtok) / 1_000_000;
  // Round up, forgiving float noise (3.0000000004 is 3, not 4).
  return Math.max(0, Math.ceil(usd * creditsPerUsd - 1e-6));
}

/** Rough token count of text for estimates and for streams that end without usage. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
