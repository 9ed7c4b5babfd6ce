// Gemini finishReason (https://ai.google.dev/api/generate-content#FinishReason) -> OpenAI finish_reason. A function-call answer ends
// with STOP: the caller says whether the candidate holds functionCall parts.
const CONTENT_FILTER = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION",
]);

export function mapGeminiFinishReason(finishReason: string | undefined, hasToolCalls: boolean): string {
  if (finishReason === "MAX_TOKENS") return "length";
  if (finishReason !== undefined && CONTENT_FILTER.has(finishReason)) return "content_filter";
  // STOP and the rest (OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL, ...) end the turn normally.
  return hasToolCalls ? "tool_calls" : "stop";
}
