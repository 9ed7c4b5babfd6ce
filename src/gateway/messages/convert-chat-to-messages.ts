// OpenAI chat.completion -> Anthropic Messages response, for the messages endpoint. Pure.

import { MAX_JSON_DEPTH, nestingDepthExceeds } from "../../json/json-nesting.js";
import { isObject } from "../../json/json-values.js";
import type { ChatCompletion, ChatUsage } from "../../providers/chat-types.js";
import type { MessagesJson, MessagesOutputBlock, MessagesResponse, MessagesUsage, StopReason } from "./messages-types.js";

export interface ChatToMessagesOptions {
  /** The model name the client asked for. */
  model: string;
}

export function convertChatToMessages(completion: ChatCompletion, options: ChatToMessagesOptions): MessagesResponse {
  const choice = completion.choices[0] ?? {};
  const message = isObject(choice.message) ? choice.message : {};
  const content: MessagesOutputBlock[] = [];
  const text = typeof message.content === "string" ? message.content : typeof message.refusal === "string" ? message.refusal : "";
  if (text) content.push({ type: "text", text });
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
  for (const call of calls) {
    const fn = isObject(call.function) ? call.function : {};
    content.push({ type: "tool_use", id: String(call.id ?? ""), name: String(fn.name ?? ""), input: parseInput(fn.arguments) });
  }
  return {
    id: messageId(completion.id),
    type: "message",
    role: "assistant",
    model: options.model,
    content,
    stop_reason: mapFinishReasonToStopReason(typeof choice.finish_reason === "string" ? choice.finish_reason : null),
    stop_sequence: null,
    usage: convertChatUsage(completion.usage),
  };
}

/** `stop` cannot tell a matched stop sequence from a natural end: both are end_turn. */
export function mapFinishReasonToStopReason(finishReason: string | null | undefined): StopReason {
  switch (finishReason) {
    case "length":
      return "max_tokens";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "content_filter":
      return "refusal";
    default:
      return "end_turn";
  }
}

/** input_tokens excludes cache reads and writes, as Anthropic counts them. */
export function convertChatUsage(usage: ChatUsage | null | undefined): MessagesUsage {
  const cached = numberOrZero(usage?.prompt_tokens_details?.cached_tokens);
  const written = numberOrZero(usage?.prompt_tokens_details?.cache_write_tokens);
  return {
    input_tokens: Math.max(0, numberOrZero(usage?.prompt_tokens) - cached - written),
    output_tokens: numberOrZero(usage?.completion_tokens),
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
  };
}

function numberOrZero(value: unknown): number {
  return typeof value === "number" ? value : 0;
}

/** Anthropic ids start with `msg_`; an upstream's own id is kept after that prefix. */
export function messageId(id: unknown): string {
  const value = typeof id === "string" && id ? id : String(Date.now());
  return value.startsWith("msg_") ? value : `msg_${value.replace(/^chatcmpl-/, "")}`;
}

/**
 * Tool arguments the model produced; malformed JSON (the model's own) becomes an empty input, and
 * so does JSON nested too deep to be written back out.
 */
function parseInput(value: unknown): MessagesJson {
  if (typeof value !== "string" || !value) return {};
  try {
    const parsed: unknown = JSON.parse(value);
    return isObject(parsed) && !nestingDepthExceeds(parsed, MAX_JSON_DEPTH) ? parsed : {};
  } catch {
    return {};
  }
}
