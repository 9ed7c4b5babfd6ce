// The embedding models gw knows the price of, by provider type and vendor model id: a route that
// sends `text-embedding-3-small` to an `openai`-type provider is billed at OpenAI's price even
// when models[] has no entry for it. A models[] entry with a price wins (the operator's word);
// a model in neither is billed at billing.defaultChatPricing's input price, like an unpriced chat
// model. They are not models[] entries on purpose: GET /v1/models lists chat models (as
// OpenRouter's lists text models unless asked for embeddings), and these answer no chat.
//
// USD per million input tokens from the vendors' public price lists as of 2025 (estimates for the
// operator to check): OpenAI text-embedding-3-small $0.02, text-embedding-3-large $0.13,
// text-embedding-ada-002 $0.10; Gemini gemini-embedding-001 $0.15, text-embedding-004 free of
// charge on the Gemini API. Embeddings produce no output tokens.
import type { Pricing } from "./config-schema.js";

export interface EmbeddingModelPrice {
  /** The provider type that serves it (`openai`, `gemini`). */
  providerType: string;
  /** The vendor's model id, as the route sends it upstream. */
  model: string;
  pricing: Pricing;
}

const perMillionInputTokens = (usd: number): Pricing => ({ input_per_mtok: usd, output_per_mtok: 0 });

export const DEFAULT_EMBEDDING_MODELS: readonly EmbeddingModelPrice[] = [
  { providerType: "openai", model: "text-embedding-3-small", pricing: perMillionInputTokens(0.02) },
  { providerType: "openai", model: "text-embedding-3-large", pricing: perMillionInputTokens(0.13) },
  { providerType: "openai", model: "text-embedding-ada-002", pricing: perMillionInputTokens(0.1) },
  { providerType: "gemini", model: "gemini-embedding-001", pricing: perMillionInputTokens(0.15) },
  { providerType: "gemini", model: "text-embedding-004", pricing: perMillionInputTokens(0) },
];

/** The built-in price of a vendor's embedding model, if gw knows it. */
export function defaultEmbeddingPrice(providerType: string | undefined, model: string): Pricing | undefined {
  return DEFAULT_EMBEDDING_MODELS.find((entry) => entry.providerType === providerType && entry.model === model)?.pricing;
}
