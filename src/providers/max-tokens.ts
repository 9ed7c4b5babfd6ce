// The output limit gw fills in for a request that names none: written in the field the upstream
// reads, never over a limit the caller set.
import type { ChatRequest } from "./chat-types.js";

export type MaxTokensField = "max_tokens" | "max_completion_tokens";

export function withFilledMaxTokens(request: ChatRequest, fill: number | undefined, field: MaxTokensField = "max_completion_tokens"): ChatRequest {
  if (fill === undefined || isSet(request.max_tokens) || isSet(request.max_completion_tokens)) return request;
  return { ...request, [field]: fill };
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}
