// The one output cap a call sends upstream. Credits are reserved for one number of output tokens;
// an upstream that read another cap field than that one could write more than was paid for. So
// every field some server reads as the cap is taken out of the request, and the cap the credits
// were reserved for is written in the one field the vendor reads (docs/decisions.md §3).
import { withoutFields } from "../json/json-values.js";
import type { JsonObject } from "./chat-types.js";

export type MaxTokensField = "max_tokens" | "max_completion_tokens";

/**
 * Top-level fields read as the output cap: OpenAI's two, the Responses API's, Hugging Face TGI's,
 * llama.cpp's server's `n_predict` (read before max_tokens) and TabbyAPI's alias `max_length`.
 */
export const OUTPUT_CAP_FIELDS = ["max_tokens", "max_completion_tokens", "max_output_tokens", "max_new_tokens", "n_predict", "max_length"] as const;

/**
 * Top-level fields that make a server write past what was reserved: text-generation-webui's
 * switch to write to the end of the context, and llama.cpp's `n_cmpl`, a count of completions it
 * reads before `n` (the reservation is the cap times `n`).
 */
const OUTPUT_CAP_OVERRIDES = ["auto_max_new_tokens", "n_cmpl"] as const;

const REMOVED_FIELDS: readonly string[] = [...OUTPUT_CAP_FIELDS, ...OUTPUT_CAP_OVERRIDES];

/** The smallest cap the request names in any of those fields, or undefined when it names none. */
export function requestedOutputCap(request: JsonObject): number | undefined {
  let cap: number | undefined;
  for (const field of OUTPUT_CAP_FIELDS) {
    const value = request[field];
    if (typeof value === "number" && (cap === undefined || value < cap)) cap = value;
  }
  return cap;
}

/** The request without any output-cap field or cap override (a copy only when it has one). */
export function withoutOutputCaps<T extends JsonObject>(request: T): T {
  return withoutFields(request, REMOVED_FIELDS);
}

/**
 * The request with `cap` in `field` and no other output-cap field. Without `cap` (a provider
 * called directly, not through the gateway), the smallest cap the request names, if any.
 */
export function withOutputCap<T extends JsonObject>(request: T, cap: number | undefined, field: string): T {
  const value = cap ?? requestedOutputCap(request);
  const stripped = withoutOutputCaps(request);
  return value === undefined ? stripped : { ...stripped, [field]: value };
}
