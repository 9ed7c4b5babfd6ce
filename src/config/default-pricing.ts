// Which routable chat models are billed at billing.defaultChatPricing because models[] gives
// them no price (gateway/billing/chat-reservation.ts falls back the same way): `gw doctor` warns
// about them and `gw models` marks them, so the hidden default is never a surprise on a bill.
import type { Pricing } from "./config-schema.js";
import { autoUpstreamModelIds, prefixRoutes, routesServing } from "./model-routes.js";
import type { Config } from "./resolved-config.js";

type PricingConfig = Pick<Config, "routes" | "providers" | "models" | "billing">;

export interface ModelPrice {
  pricing: Pricing;
  /** True when the model has no price of its own and falls back to billing.defaultChatPricing. */
  isDefault: boolean;
}

export function priceOf(config: Pick<Config, "models" | "billing">, modelId: string): ModelPrice {
  const own = config.models.find((model) => model.id === modelId)?.pricing;
  return own ? { pricing: own, isDefault: false } : { pricing: config.billing.defaultChatPricing, isDefault: true };
}

/**
 * Model ids a route serves that are billed at the default: models[] entries without a price, and
 * `auto` upstreams with no models[] entry at all (both are ids the config names).
 */
export function defaultPricedModels(config: PricingConfig): string[] {
  const listed = config.models.filter((model) => routesServing(config, model.id).length > 0).map((model) => model.id);
  const candidates = [...new Set([...listed, ...autoUpstreamModelIds(config)])];
  return candidates.filter((id) => priceOf(config, id).isDefault);
}

/** Prefixes whose models without a models[] entry are billed at the default (any id they route). */
export function defaultPricedPrefixes(config: PricingConfig): string[] {
  return [...new Set(prefixRoutes(config).map((route) => route.prefix))];
}

/** "$1/$3": USD per million input / output tokens. */
export function formatPrice(pricing: Pricing): string {
  return `$${pricing.input_per_mtok}/$${pricing.output_per_mtok}`;
}

/** How `gw models` shows a model's price: "$0.15/$0.6", or "default $1/$3" when it falls back. */
export function priceLabel(config: Pick<Config, "models" | "billing">, modelId: string): string {
  const price = priceOf(config, modelId);
  return price.isDefault ? `default ${formatPrice(price.pricing)}` : formatPrice(price.pricing);
}
