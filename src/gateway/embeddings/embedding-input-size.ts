// How many tokens an embeddings request's inputs hold, before any upstream has seen them: an upper
// bound for the credit reservation, and an estimate billed when the upstream reports no count
// (Gemini never does). No tokenizer makes more tokens of a text than its UTF-8 bytes
// (billing/prompt-measure.ts), and a token-id input is exactly as many tokens as it lists.
import { type EmbeddingInput, embeddingInputs } from "../../providers/embedding-types.js";
import { estimateTextTokens } from "../billing/prompt-measure.js";

/**
 * Tokens a model may add around each input: BERT-style embedding servers behind an `openai`-type
 * provider count a start and an end token in `prompt_tokens`.
 */
export const SPECIAL_TOKENS_PER_INPUT = 2;

export interface EmbeddingInputSize {
  /** How many inputs, so vectors. */
  count: number;
  /** At most this many input tokens. */
  tokenBound: number;
  /** About this many input tokens. */
  tokenEstimate: number;
}

export function measureEmbeddingInput(input: EmbeddingInput): EmbeddingInputSize {
  const inputs = embeddingInputs(input);
  let tokenBound = 0;
  let tokenEstimate = 0;
  for (const item of inputs) {
    if (typeof item === "string") {
      const bytes = Buffer.byteLength(item);
      tokenBound += bytes;
      tokenEstimate += estimateTextTokens(item.length, bytes);
    } else {
      tokenBound += item.length;
      tokenEstimate += item.length;
    }
  }
  return { count: inputs.length, tokenBound: tokenBound + SPECIAL_TOKENS_PER_INPUT * inputs.length, tokenEstimate };
}
