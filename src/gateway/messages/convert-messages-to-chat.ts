// Anthropic Messages request -> OpenAI chat-completions request, for the messages endpoint in
// front of any chat upstream. Pure. Dropped on purpose, as they only tune Anthropic's own serving
// (docs/decisions.md §20): metadata, thinking, context_management, output_config.effort,
// service_tier, cache_control marks, and top_k (OpenAI servers refuse the unknown parameter).
// System messages between turns stay in place as chat system messages. max_tokens is not
// converted: the provider writes the cap reserved for in the field it reads (ChatCallOptions).

import { isObject } from "../../json/json-values.js";
import type { ChatRequest } from "../../providers/chat-types.js";
import { UnsupportedContentError } from "../../providers/provider-errors.js";
import type { MessagesInputBlock, MessagesJson, MessagesMessage, MessagesRequest, MessagesTool, UncappedMessagesRequest } from "./messages-types.js";
import { isShown, systemMessageBlocks } from "./system-messages.js";

type ChatMessage = MessagesJson & { role: string };

export function convertMessagesToChat(request: UncappedMessagesRequest): ChatRequest {
  const messages: ChatMessage[] = [];
  const system = typeof request.system === "string" ? request.system : (request.system ?? []).map((block) => block.text).join("\n\n");
  if (system) messages.push({ role: "system", content: system });
  request.messages.forEach((message, index) => {
    const param = `messages[${index}].content`;
    if (message.role === "system") {
      const text = systemMessageBlocks(message, param)
        .map((block) => block.text)
        .join("\n\n");
      if (text && isShown(request.messages, index)) messages.push({ role: "system", content: text });
    } else if (message.role === "assistant") messages.push(assistantMessage(message, param));
    else messages.push(...userMessages(message, param));
  });
  const chat: ChatRequest = { model: request.model, messages };
  if (request.stream) chat.stream = true;
  if (request.stop_sequences?.length) chat.stop = request.stop_sequences;
  if (typeof request.temperature === "number") chat.temperature = request.temperature;
  if (typeof request.top_p === "number") chat.top_p = request.top_p;
  if (request.tools?.length) chat.tools = request.tools.map(convertTool);
  if (request.tool_choice) Object.assign(chat, convertToolChoice(request.tool_choice));
  const format = isObject(request.output_config) ? request.output_config.format : undefined;
  if (isObject(format) && format.type === "json_schema") chat.response_format = { type: "json_schema", json_schema: { name: "output", schema: format.schema } };
  return chat;
}

function blocksOf(content: MessagesMessage["content"]): MessagesInputBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

/**
 * A user turn: its tool_result blocks become `tool` messages (OpenAI keeps results out of user
 * messages), then the rest of the turn, including images returned by tools, one user message.
 */
function userMessages(message: MessagesMessage, param: string): ChatMessage[] {
  if (typeof message.content === "string") return [{ role: "user", content: message.content }];
  const tools: ChatMessage[] = [];
  const parts: MessagesJson[] = [];
  message.content.forEach((block, index) => {
    const blockParam = `${param}[${index}]`;
    if (block.type !== "tool_result") {
      parts.push(...userParts(block, blockParam));
      return;
    }
    const inner = typeof block.content === "string" ? [{ type: "text", text: block.content }] : asBlocks(block.content);
    const text = inner
      .filter((item) => item.type === "text")
      .map((item) => String(item.text ?? ""))
      .join("\n");
    // OpenAI has no is_error flag: the model reads it from the text instead.
    tools.push({ role: "tool", tool_call_id: String(block.tool_use_id ?? ""), content: block.is_error ? `Error: ${text}` : text });
    inner
      .filter((item) => item.type !== "text")
      .forEach((item, itemIndex) => {
        parts.push(...userParts(item, `${blockParam}.content[${itemIndex}]`));
      });
  });
  if (parts.length === 0) return tools;
  const onlyText = parts.length === 1 && parts[0]!.type === "text";
  return [...tools, { role: "user", content: onlyText ? parts[0]!.text : parts }];
}

function userParts(block: MessagesInputBlock, param: string): MessagesJson[] {
  if (block.type === "text") return typeof block.text === "string" && block.text ? [{ type: "text", text: block.text }] : [];
  const source = isObject(block.source) ? block.source : {};
  if (block.type === "image") {
    if (source.type === "base64") return [{ type: "image_url", image_url: { url: `data:${String(source.media_type)};base64,${String(source.data)}` } }];
    if (source.type === "url" && typeof source.url === "string") return [{ type: "image_url", image_url: { url: source.url } }];
  }
  if (block.type === "document") {
    if (source.type === "base64") {
      return [
        {
          type: "file",
          file: {
            filename: typeof block.title === "string" ? block.title : "document.pdf",
            file_data: `data:${String(source.media_type)};base64,${String(source.data)}`,
          },
        },
      ];
    }
    if (source.type === "text" && typeof source.data === "string") return [{ type: "text", text: source.data }];
  }
  throw new UnsupportedContentError(`Content blocks of type '${block.type}' with this source are not supported here.`, param);
}

function assistantMessage(message: MessagesMessage, param: string): ChatMessage {
  let text = "";
  const toolCalls: MessagesJson[] = [];
  blocksOf(message.content).forEach((block, index) => {
    if (block.type === "text" && typeof block.text === "string") text += block.text;
    else if (block.type === "tool_use") {
      toolCalls.push({
        id: String(block.id ?? ""),
        type: "function",
        function: { name: String(block.name ?? ""), arguments: JSON.stringify(block.input ?? {}) },
      });
    } else if (block.type !== "thinking" && block.type !== "redacted_thinking") {
      // Thinking is the model's own scratch work; other blocks have no chat form.
      throw new UnsupportedContentError(`Assistant content blocks of type '${block.type}' are not supported here.`, `${param}[${index}]`);
    }
  });
  const chat: ChatMessage = { role: "assistant", content: text || (toolCalls.length > 0 ? null : "") };
  if (toolCalls.length > 0) chat.tool_calls = toolCalls;
  return chat;
}

function convertTool(tool: MessagesTool, index: number): MessagesJson {
  if (tool.type !== undefined && tool.type !== "custom") {
    throw new UnsupportedContentError(`Server tools ('${tool.type}') are not supported here; define client tools.`, `tools[${index}]`);
  }
  const fn: MessagesJson = { name: tool.name, parameters: tool.input_schema ?? { type: "object", properties: {} } };
  if (tool.description !== undefined) fn.description = tool.description;
  return { type: "function", function: fn };
}

function convertToolChoice(choice: NonNullable<MessagesRequest["tool_choice"]>): MessagesJson {
  const result: MessagesJson = {};
  if (choice.type === "auto") result.tool_choice = "auto";
  else if (choice.type === "any") result.tool_choice = "required";
  else if (choice.type === "none") result.tool_choice = "none";
  else if (choice.type === "tool" && choice.name) result.tool_choice = { type: "function", function: { name: choice.name } };
  if (choice.disable_parallel_tool_use) result.parallel_tool_calls = false;
  return result;
}

function asBlocks(value: unknown): MessagesInputBlock[] {
  return Array.isArray(value) ? value.filter((item): item is MessagesInputBlock => isObject(item) && typeof item.type === "string") : [];
}
