// Anthropic stop_reason (https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons) -> OpenAI finish_reason.
export function mapAnthropicFinishReason(stopReason: string | null | undefined): string {
  switch (stopReason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      // end_turn, stop_sequence, pause_turn (the turn can be resumed, but it did end here) and
      // anything newer.
      return "stop";
  }
}
