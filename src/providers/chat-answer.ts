// What the gateway relies on in an upstream's chat answer. A 200 whose body is null, a number,
// an array, an object without choices or one nested too deep to write back out is the upstream's fault: reported as an invalid
// response, which the gateway retries and falls back from like a 5xx (never a 500 of its own).

import { MAX_JSON_DEPTH, nestingDepthExceeds } from "../json/json-nesting.js";
import { isObject } from "../json/json-values.js";
import type { ChatCompletion } from "./chat-types.js";
import { UpstreamNetworkError } from "./provider-errors.js";

export function requireChatCompletion(provider: string, body: unknown): ChatCompletion {
  const { choices } = requireJsonObject(provider, body, "a chat completion");
  if (!Array.isArray(choices) || choices.length === 0 || !choices.every(isObject)) {
    throw new UpstreamNetworkError(provider, "invalid_response", "the answer has no choices");
  }
  return body as ChatCompletion;
}

/** Throws unless the body is a JSON object (vendors whose answers are converted field by field). */
export function requireJsonObject(provider: string, body: unknown, what: string): Record<string, unknown> {
  if (!isObject(body)) throw new UpstreamNetworkError(provider, "invalid_response", `the answer is ${describeJson(body)}, not ${what}`);
  // An answer nested thousands deep parses, but writing it back to the client would throw.
  if (nestingDepthExceeds(body, MAX_JSON_DEPTH))
    throw new UpstreamNetworkError(provider, "invalid_response", `the answer is nested more than ${MAX_JSON_DEPTH} levels deep`);
  return body;
}

function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}
