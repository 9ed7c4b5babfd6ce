// System-role messages between turns: Anthropic's mid-conversation-system beta, which Claude Code
// sends. Anthropic reads them in place only when the request names that beta; otherwise gw merges
// them where the upstream allows (docs/decisions.md §20): into the top-level `system` of a native
// request, or as chat `system` messages in place (convert-messages-to-chat.ts). Pure.

import { UnsupportedContentError } from "../../providers/provider-errors.js";
import type { MessagesInputBlock, MessagesMessage, MessagesSystemMessage, MessagesTextBlock, UncappedMessagesRequest } from "./messages-types.js";

export const MID_CONVERSATION_SYSTEM_BETA = "mid-conversation-system-2026-04-07";

type AnyMessage = UncappedMessagesRequest["messages"][number];

/** Whether the client's `anthropic-beta` list (comma-joined) names `beta`. */
export function namesBeta(headers: Record<string, string>, beta: string): boolean {
  return (headers["anthropic-beta"] ?? "").split(",").some((name) => name.trim() === beta);
}

/** The request a native upstream gets: as sent when the client named the beta, else with its system messages folded. */
export function forNativeUpstream(request: UncappedMessagesRequest, headers: Record<string, string>): UncappedMessagesRequest {
  return namesBeta(headers, MID_CONVERSATION_SYSTEM_BETA) ? request : foldSystemMessages(request);
}

/**
 * Whether the model still reads the system message at `index`: one with
 * `clear_at: "next_user_message"` is hidden once a later user turn exists (as Anthropic does).
 */
export function isShown(messages: AnyMessage[], index: number): boolean {
  const message = messages[index];
  if (message?.role !== "system" || message.clear_at !== "next_user_message") return true;
  return !messages.slice(index + 1).some((later) => later.role === "user");
}

/** A system message's text blocks; any other block (a tool addition or removal) has no form outside Anthropic's own reading. */
export function systemMessageBlocks(message: MessagesSystemMessage, param: string): MessagesTextBlock[] {
  const content = message.content ?? [];
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  return content.map((block, index) => {
    if (block.type !== "text" || typeof block.text !== "string") {
      throw new UnsupportedContentError(
        `System messages with content blocks of type '${block.type}' are not supported for this model; send text blocks.`,
        `${param}[${index}]`,
      );
    }
    return block as MessagesTextBlock;
  });
}

/**
 * For a native upstream without the beta: the shown system messages' text after the top-level
 * `system`, and the turns they separated merged into one (Anthropic merges consecutive turns of
 * one role itself). Their position is lost; `output_config` on them is dropped.
 */
export function foldSystemMessages(request: UncappedMessagesRequest): UncappedMessagesRequest {
  if (!request.messages.some((message) => message.role === "system")) return request;
  const folded: MessagesTextBlock[] = [];
  const turns: MessagesMessage[] = [];
  request.messages.forEach((message, index) => {
    if (message.role === "system") {
      if (isShown(request.messages, index)) folded.push(...systemMessageBlocks(message, `messages[${index}].content`));
      return;
    }
    const previous = turns.at(-1);
    if (previous?.role === message.role) turns[turns.length - 1] = { ...previous, content: [...blocksOf(previous.content), ...blocksOf(message.content)] };
    else turns.push(message);
  });
  const result: UncappedMessagesRequest = { ...request, messages: turns };
  if (folded.length > 0) result.system = [...topLevelBlocks(request.system), ...folded];
  return result;
}

function topLevelBlocks(system: UncappedMessagesRequest["system"]): MessagesTextBlock[] {
  if (system === undefined) return [];
  return typeof system === "string" ? (system ? [{ type: "text", text: system }] : []) : system;
}

function blocksOf(content: MessagesMessage["content"]): MessagesInputBlock[] {
  return typeof content === "string" ? (content ? [{ type: "text", text: content }] : []) : content;
}
