// OpenAI chat.completion.chunk objects -> the native Anthropic event sequence (Anthropic, Streaming Messages:
// https://platform.claude.com/docs/en/build-with-claude/streaming): message_start, then per content block content_block_start, deltas,
// content_block_stop, and at the end message_delta (stop_reason, usage) and message_stop.

import { isObject } from "../../json/json-values.js";
import type { ChatChunk, ChatUsage } from "../../providers/chat-types.js";
import { convertChatUsage, mapFinishReasonToStopReason, messageId } from "./convert-chat-to-messages.js";
import type { MessagesJson, MessagesStreamEvent, StopReason } from "./messages-types.js";

export interface ChatStreamToMessagesOptions {
  model: string;
  /** Input tokens to announce in message_start, when known (e.g. estimated) before the usage chunk. */
  inputTokens?: number;
}

interface OpenBlock {
  index: number;
  /** The OpenAI tool-call index a tool_use block stands for. */
  toolIndex?: number;
}

export class ChatStreamToMessagesEvents {
  private started = false;
  private pinged = false;
  private nextIndex = 0;
  private open: OpenBlock | undefined;
  private readonly toolBlocks = new Map<number, number>();
  private stopReason: StopReason = "end_turn";
  private usage: ChatUsage | undefined;

  constructor(private readonly options: ChatStreamToMessagesOptions) {}

  push(chunk: ChatChunk): MessagesStreamEvent[] {
    const events = this.start(chunk.id);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.find((candidate) => (candidate.index ?? 0) === 0);
    const delta = choice?.delta ?? {};
    if (typeof delta.content === "string" && delta.content) {
      if (this.open?.toolIndex !== undefined || !this.open) events.push(...this.openBlock({ type: "text", text: "" }));
      events.push(this.blockDelta(this.open!.index, { type: "text_delta", text: delta.content }));
    }
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isObject) : []) events.push(...this.toolCall(call));
    // Reasoning deltas (reasoning_content ...) are not turned into thinking blocks: they would need signatures.
    if (choice?.finish_reason) {
      this.stopReason = mapFinishReasonToStopReason(choice.finish_reason);
      events.push(...this.closeBlock());
    }
    return events;
  }

  /** Usage to report when the chat stream carried none (an estimate). */
  setUsage(usage: ChatUsage): void {
    this.usage ??= usage;
  }

  /** The closing events, once the chat stream ended (after its usage chunk). */
  finish(): MessagesStreamEvent[] {
    const events = [...this.start(undefined), ...this.closeBlock()];
    const usage = convertChatUsage(this.usage);
    events.push({ event: "message_delta", data: { type: "message_delta", delta: { stop_reason: this.stopReason, stop_sequence: null }, usage } });
    events.push({ event: "message_stop", data: { type: "message_stop" } });
    return events;
  }

  private start(id: unknown): MessagesStreamEvent[] {
    if (this.started) return [];
    this.started = true;
    const message = {
      id: messageId(id),
      type: "message",
      role: "assistant",
      model: this.options.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // Real counts are unknown until the usage chunk; message_delta carries them.
      usage: { input_tokens: this.options.inputTokens ?? 0, output_tokens: 0 },
    };
    return [{ event: "message_start", data: { type: "message_start", message } }];
  }

  private toolCall(call: MessagesJson): MessagesStreamEvent[] {
    const events: MessagesStreamEvent[] = [];
    const toolIndex = typeof call.index === "number" ? call.index : 0;
    const fn = isObject(call.function) ? call.function : {};
    let blockIndex = this.toolBlocks.get(toolIndex);
    if (blockIndex === undefined) {
      events.push(...this.openBlock({ type: "tool_use", id: String(call.id ?? ""), name: String(fn.name ?? ""), input: {} }, toolIndex));
      blockIndex = this.open!.index;
      this.toolBlocks.set(toolIndex, blockIndex);
    }
    // Arguments for an earlier, already closed call (OpenAI streams calls one after another, so
    // rarely) still go to that call's block, where SDKs accumulate them by index.
    if (typeof fn.arguments === "string" && fn.arguments) events.push(this.blockDelta(blockIndex, { type: "input_json_delta", partial_json: fn.arguments }));
    return events;
  }

  private openBlock(contentBlock: MessagesJson, toolIndex?: number): MessagesStreamEvent[] {
    const events = this.closeBlock();
    this.open = { index: this.nextIndex++, toolIndex };
    events.push({ event: "content_block_start", data: { type: "content_block_start", index: this.open.index, content_block: contentBlock } });
    if (!this.pinged) {
      this.pinged = true;
      events.push({ event: "ping", data: { type: "ping" } });
    }
    return events;
  }

  private closeBlock(): MessagesStreamEvent[] {
    if (!this.open) return [];
    const index = this.open.index;
    this.open = undefined;
    return [{ event: "content_block_stop", data: { type: "content_block_stop", index } }];
  }

  private blockDelta(index: number, delta: MessagesJson): MessagesStreamEvent {
    return { event: "content_block_delta", data: { type: "content_block_delta", index, delta } };
  }
}

/** Anthropic's error type for an HTTP status (https://platform.claude.com/docs/en/api/errors). */
export function messagesErrorType(status: number): string {
  const types: Record<number, string> = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
  };
  return types[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

/** The `error` event that ends a native stream which failed after it started. */
export function messagesErrorEvent(type: string, message: string): MessagesStreamEvent {
  return { event: "error", data: { type: "error", error: { type, message } } };
}
