// OpenAI's `reasoning_effort` for Anthropic: extended thinking with a token budget per effort.
// Anthropic's rules (reference: the Messages API's `thinking`): budget_tokens at least 1024 and
// below max_tokens (the thinking counts in max_tokens), temperature only 1, no top_k, top_p of
// 0.95 or more, tool_choice only auto or none, and a final assistant turn with tool calls must
// start with the signed thinking block, which chat completions cannot carry back. What cannot be
// honoured is refused, never dropped. Pure. docs/decisions.md §4.
import { UnsupportedContentError } from "../provider-errors.js";
import type { AnthropicMessagesRequest, AnthropicThinking } from "./anthropic-api.js";

/** Thinking budget per effort, before the cut that leaves room for the answer. */
export const THINKING_BUDGETS: ReadonlyMap<string, number> = new Map([
  ["low", 1024],
  ["medium", 4096],
  ["high", 16384],
]);
/** Anthropic's smallest budget. */
export const MIN_THINKING_BUDGET = 1024;
/** Tokens of max_tokens kept for the answer itself. */
export const ANSWER_ROOM_TOKENS = 1024;

/**
 * The `thinking` field for a request's reasoning_effort (undefined for none), checked against the
 * rest of the Anthropic request it goes with (max_tokens, sampling, tool_choice, messages).
 */
export function thinkingFor(reasoningEffort: unknown, body: AnthropicMessagesRequest): AnthropicThinking | undefined {
  if (reasoningEffort === undefined || reasoningEffort === null || reasoningEffort === "none") return undefined;
  const effort = typeof reasoningEffort === "string" ? THINKING_BUDGETS.get(reasoningEffort) : undefined;
  if (effort === undefined) {
    throw new UnsupportedContentError(
      `Anthropic's extended thinking takes reasoning_effort low, medium or high (or none); not ${JSON.stringify(reasoningEffort).slice(0, 40)}.`,
      "reasoning_effort",
    );
  }
  const budget = Math.min(effort, body.max_tokens - ANSWER_ROOM_TOKENS);
  if (budget < MIN_THINKING_BUDGET) {
    throw new UnsupportedContentError(
      `Anthropic's extended thinking needs max_tokens of at least ${MIN_THINKING_BUDGET + ANSWER_ROOM_TOKENS} (${MIN_THINKING_BUDGET} to think, ${ANSWER_ROOM_TOKENS} to answer); this call has ${body.max_tokens}.`,
      "reasoning_effort",
    );
  }
  if (body.temperature !== undefined && body.temperature !== 1) {
    throw new UnsupportedContentError("Anthropic's extended thinking (reasoning_effort) takes no temperature but 1: leave temperature out.", "temperature");
  }
  if (body.top_k !== undefined) throw new UnsupportedContentError("Anthropic's extended thinking (reasoning_effort) takes no top_k.", "top_k");
  if (body.top_p !== undefined && body.top_p < 0.95) {
    throw new UnsupportedContentError("Anthropic's extended thinking (reasoning_effort) takes top_p of 0.95 or more.", "top_p");
  }
  if (body.tool_choice?.type === "any" || body.tool_choice?.type === "tool") {
    throw new UnsupportedContentError(
      "Anthropic's extended thinking (reasoning_effort) cannot be combined with a forced tool call (tool_choice required or a named function, or a JSON response_format).",
      "reasoning_effort",
    );
  }
  // A conversation ending in tool results: the assistant turn before them called the tools.
  const answered = body.messages.at(-2);
  if (answered?.role === "assistant" && answered.content.some((block) => block.type === "tool_use")) {
    throw new UnsupportedContentError(
      "Anthropic's extended thinking needs the model's signed thinking back with tool results, which chat completions cannot carry: leave reasoning_effort out of a request that answers tool calls.",
      "reasoning_effort",
    );
  }
  return { type: "enabled", budget_tokens: budget };
}
