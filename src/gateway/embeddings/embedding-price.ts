// What one input token costs through a route candidate: the models[] entry's price for the public
// model when it has one, else the built-in price of the vendor's model
// (config/default-embedding-models.ts), else billing.defaultChatPricing like any unpriced model.

import type { Pricing } from "../../config/config-schema.js";
import { defaultEmbeddingPrice } from "../../config/default-embedding-models.js";
import { priceOf } from "../../config/default-pricing.js";
import type { Config } from "../../config/resolved-config.js";
import type { RouteCandidate } from "../routing/route-resolver.js";

export function embeddingPricing(config: Pick<Config, "models" | "billing" | "providers">, candidate: RouteCandidate): Pricing {
  const configured = priceOf(config, candidate.publicModel);
  if (!configured.isDefault) return configured.pricing;
  return defaultEmbeddingPrice(config.providers[candidate.provider]?.type, candidate.upstreamModel) ?? configured.pricing;
}
