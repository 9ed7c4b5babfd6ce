// OpenAI chat-completions request -> Anthropic Messages request (https://platform.claude.com/docs/en/api/messages). Pure.
// response_format becomes a forced answer tool (convert-to-anthropic-answer-tool.ts) and
// reasoning_effort extended thinking (convert-to-anthropic-thinking.ts); what they cannot honour is
// refused. Parameters Anthropic has no field for (seed, penalties, logprobs, logit_bias,
// stream_options, service_tier, store ...) are left out: sending them would be a 400.

import { isObject, type Json } from "../../json/json-values.js";
import type { ChatRequest } from "../chat-types.js";
import { contentParts, functionToolsOf, imageUrlOf, namedToolChoice, parseDataUrl, parseToolArguments, textOf } from "../openai-message-parts.js";
import { UnsupportedContentError } from "../provider-errors.js";
import type { AnthropicContentBlock, AnthropicMessage, AnthropicMessagesRequest, AnthropicTool, AnthropicToolChoice } from "./anthropic-api.js";
import { hasFixedSampling, rejectsPrefill } from "./anthropic-model-rules.js";
import { answerToolFor } from "./convert-to-anthropic-answer-tool.js";
import { thinkingFor } from "./convert-to-anthropic-thinking.js";

export const DEFAULT_MAX_TOKENS = 4096;
const IMAGE_MEDIA_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

export interface AnthropicRequestSettings {
  /** max_tokens when the client sent none (Anthropic requires it). */
  defaultMaxTokens: number;
}

export function convertToAnthropicChat(
  request: ChatRequest,
  settings: AnthropicRequestSettings = { defaultMaxTokens: DEFAULT_MAX_TOKENS },
): AnthropicMessagesRequest {
  if (typeof request.n === "number" && request.n > 1) {
    throw new UnsupportedContentError("Anthropic returns one choice per request; n must be 1.", "n");
  }
  const answerTool = answerToolFor(request.response_format);
  const tools = convertTools(request.tools);
  if (answerTool && tools) {
    throw new UnsupportedContentError(
      "Anthropic gives a JSON response_format as a forced tool call, which cannot be combined with tools: send one or the other.",
      "response_format",
    );
  }
  const { system, messages } = convertMessages(request.messages, request.model);
  const body: AnthropicMessagesRequest = {
    model: request.model,
    max_tokens: numberOr(request.max_completion_tokens, numberOr(request.max_tokens, settings.defaultMaxTokens)),
    messages,
  };
  if (system) body.system = system;
  const stop = stopSequences(request.stop);
  if (stop.length > 0) body.stop_sequences = stop;
  Object.assign(body, sampling(request));
  if (tools) {
    body.tools = tools;
    const choice = convertToolChoice(request.tool_choice, request.parallel_tool_calls === false);
    if (choice) body.tool_choice = choice;
  }
  if (answerTool) {
    body.tools = [answerTool];
    body.tool_choice = { type: "tool", name: answerTool.name };
  }
  // Last: it is checked against everything above (max_tokens, sampling, tool_choice, messages).
  const thinking = thinkingFor(request.reasoning_effort, body);
  if (thinking) body.thinking = thinking;
  const user = request.user ?? request.safety_identifier;
  if (typeof user === "string" && user) body.metadata = { user_id: user };
  return body;
}

function convertMessages(input: Json[], model: string): { system: string; messages: AnthropicMessage[] } {
  const system: string[] = [];
  const messages: AnthropicMessage[] = [];
  input.forEach((message, index) => {
    const param = `messages[${index}]`;
    switch (message.role) {
      case "system":
      case "developer": {
        // Hoisted to the top-level system prompt; a mid-conversation position is lost.
        const text = textOf(message.content);
        if (text.trim()) system.push(text);
        return;
      }
      case "user":
        append(messages, "user", userBlocks(message.content, param));
        return;
      case "assistant":
        append(messages, "assistant", assistantBlocks(message, param));
        return;
      case "tool":
        append(messages, "user", [toolResult(message, param)]);
        return;
      default:
        throw new UnsupportedContentError(`Messages with role '${String(message.role)}' are not supported.`, `${param}.role`);
    }
  });
  if (messages.length === 0) throw new UnsupportedContentError("At least one user or assistant message is required.", "messages");
  // The conversation must open with a user turn: a leading assistant greeting gets a minimal one.
  if (messages[0]!.role === "assistant") messages.unshift({ role: "user", content: [{ type: "text", text: "." }] });
  const last = messages.at(-1)!;
  if (last.role === "assistant") {
    // A trailing assistant turn is prefill. Newer models refuse it, so the model answers the
    // last user turn instead; older ones continue it, and reject trailing whitespace in it.
    if (rejectsPrefill(model) && !last.content.some((block) => block.type === "tool_use")) messages.pop();
    else trimTrailingWhitespace(last);
  }
  // tool_result blocks must open their user turn, before any text the client sent after them.
  for (const message of messages) {
    if (message.role === "user") message.content.sort((a, b) => Number(b.type === "tool_result") - Number(a.type === "tool_result"));
  }
  return { system: system.join("\n\n"), messages };
}

/** Consecutive same-role messages become one turn (older API versions reject non-alternating roles). */
function append(messages: AnthropicMessage[], role: AnthropicMessage["role"], blocks: AnthropicContentBlock[]): void {
  if (blocks.length === 0) return;
  const last = messages.at(-1);
  if (last?.role === role) last.content.push(...blocks);
  else messages.push({ role, content: blocks });
}

function userBlocks(content: unknown, param: string): AnthropicContentBlock[] {
  return contentParts(content).flatMap((part, index): AnthropicContentBlock[] => {
    const partParam = typeof content === "string" ? `${param}.content` : `${param}.content[${index}]`;
    if (part.type === "text") return textBlock(part.text);
    if (part.type === "image_url") return [imageBlock(imageUrlOf(part, partParam), partParam)];
    throw new UnsupportedContentError(`Content parts of type '${String(part.type)}' are not supported by Anthropic.`, partParam);
  });
}

function assistantBlocks(message: Json, param: string): AnthropicContentBlock[] {
  const blocks: AnthropicContentBlock[] = textBlock(textOf(message.content));
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
  calls.forEach((call, index) => {
    const fn = isObject(call.function) ? call.function : {};
    const callParam = `${param}.tool_calls[${index}]`;
    if (typeof call.id !== "string" || typeof fn.name !== "string") {
      throw new UnsupportedContentError("A tool call needs an id and a function name.", callParam);
    }
    blocks.push({ type: "tool_use", id: call.id, name: fn.name, input: parseToolArguments(fn.arguments, `${callParam}.function.arguments`) });
  });
  return blocks;
}

function toolResult(message: Json, param: string): AnthropicContentBlock {
  if (typeof message.tool_call_id !== "string") throw new UnsupportedContentError("A tool message needs a tool_call_id.", `${param}.tool_call_id`);
  const text = textOf(message.content);
  // An empty text would be an empty content block, which Anthropic rejects: leave content out.
  return text ? { type: "tool_result", tool_use_id: message.tool_call_id, content: text } : { type: "tool_result", tool_use_id: message.tool_call_id };
}

/** Anthropic rejects empty text blocks ("text content blocks must be non-empty"). */
function textBlock(text: unknown): AnthropicContentBlock[] {
  return typeof text === "string" && text.length > 0 ? [{ type: "text", text }] : [];
}

function imageBlock(url: string, param: string): AnthropicContentBlock {
  if (/^https?:\/\//i.test(url)) return { type: "image", source: { type: "url", url } };
  const inline = parseDataUrl(url);
  if (!inline) throw new UnsupportedContentError("Images must be https URLs or base64 data: URLs.", param);
  if (!IMAGE_MEDIA_TYPES.has(inline.mediaType)) {
    throw new UnsupportedContentError(`Anthropic takes JPEG, PNG, GIF or WebP images, not ${inline.mediaType}.`, param);
  }
  return { type: "image", source: { type: "base64", media_type: inline.mediaType, data: inline.data } };
}

function trimTrailingWhitespace(message: AnthropicMessage): void {
  const last = message.content.at(-1);
  if (last?.type !== "text") return;
  last.text = last.text.trimEnd();
  if (!last.text) message.content.pop();
}

function stopSequences(stop: unknown): string[] {
  const list = typeof stop === "string" ? [stop] : Array.isArray(stop) ? stop : [];
  // Whitespace-only stop sequences ("\n") are refused by Anthropic; they are left out.
  return list.filter((value): value is string => typeof value === "string" && value.trim().length > 0);
}

function sampling(request: ChatRequest): Pick<AnthropicMessagesRequest, "temperature" | "top_p" | "top_k"> {
  if (hasFixedSampling(request.model)) return {};
  const result: Pick<AnthropicMessagesRequest, "temperature" | "top_p" | "top_k"> = {};
  // OpenAI's 0..2 range is clamped to Anthropic's 0..1 (values up to 1 keep their meaning).
  if (typeof request.temperature === "number") result.temperature = Math.min(request.temperature, 1);
  // Anthropic advises one of the two, and recent models refuse both: temperature wins.
  if (typeof request.top_p === "number" && result.temperature === undefined) result.top_p = request.top_p;
  if (typeof request.top_k === "number") result.top_k = request.top_k;
  return result;
}

function convertTools(tools: unknown): AnthropicTool[] | undefined {
  return functionToolsOf(tools, "Anthropic")?.map(({ name, description, parameters }) => {
    const converted: AnthropicTool = { name, input_schema: { type: "object", properties: {}, ...parameters } };
    if (description !== undefined) converted.description = description;
    return converted;
  });
}

function convertToolChoice(choice: unknown, disableParallel: boolean): AnthropicToolChoice | undefined {
  let converted: AnthropicToolChoice | undefined;
  const named = namedToolChoice(choice);
  if (choice === "auto") converted = { type: "auto" };
  else if (choice === "none") converted = { type: "none" };
  else if (choice === "required") converted = { type: "any" };
  else if (named !== undefined) converted = { type: "tool", name: named };
  if (!disableParallel || converted?.type === "none") return converted;
  return { ...(converted ?? { type: "auto" }), disable_parallel_tool_use: true };
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === "number" ? value : fallback;
}
