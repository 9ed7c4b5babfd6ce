// OpenAI's `reasoning_effort` for Gemini: a thinking budget (generationConfig.thinkingConfig), the
// tokens Google's own OpenAI-compatible endpoint uses per effort, and 0 for none, which turns
// thinking off (Gemini models think by default; one that cannot stop answers 0 with its own 400).
// thinkingBudget is Gemini 2.5's setting and Gemini 3 takes it too; Gemini 3's thinkingLevel is not
// sent, as the model family would have to be guessed from its name. Other efforts are refused,
// never dropped. Pure. docs/decisions.md §4.
import { UnsupportedContentError } from "../provider-errors.js";
import type { GeminiThinkingConfig } from "./gemini-api.js";

/** Thinking budget per effort. */
export const GEMINI_THINKING_BUDGETS: ReadonlyMap<string, number> = new Map([
  ["none", 0],
  ["low", 1024],
  ["medium", 8192],
  ["high", 24576],
]);

/** The thinkingConfig for a request's reasoning_effort, or undefined when it names none. */
export function convertReasoningEffort(reasoningEffort: unknown): GeminiThinkingConfig | undefined {
  if (reasoningEffort === undefined || reasoningEffort === null) return undefined;
  const thinkingBudget = typeof reasoningEffort === "string" ? GEMINI_THINKING_BUDGETS.get(reasoningEffort) : undefined;
  if (thinkingBudget === undefined) {
    throw new UnsupportedContentError(
      `Gemini's thinking budget takes reasoning_effort none, low, medium or high; not ${JSON.stringify(reasoningEffort).slice(0, 40)}.`,
      "reasoning_effort",
    );
  }
  return { thinkingBudget };
}
