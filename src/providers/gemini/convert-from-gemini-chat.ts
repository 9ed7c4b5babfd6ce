// Gemini generateContent response -> OpenAI chat.completion, and Gemini SSE chunks -> OpenAI
// chat.completion.chunk objects. Pure, given the tool-call id source (Gemini names no ids).
import { randomBytes } from "node:crypto";
import type { ChatChunk, ChatCompletion, ChatUsage } from "../chat-types.js";
import type { GeminiCandidate, GeminiResponse, GeminiResponsePart, GeminiUsageMetadata } from "./gemini-api.js";
import { mapGeminiFinishReason } from "./map-gemini-finish-reason.js";

export type ToolCallIdSource = () => string;

export const randomToolCallId: ToolCallIdSource = () => `call_${randomBytes(12).toString("base64url")}`;

export interface ConvertFromGeminiOptions {
  model: string;
  created: number;
  newToolCallId?: ToolCallIdSource;
}

export function convertFromGeminiChat(response: GeminiResponse, options: ConvertFromGeminiOptions): ChatCompletion {
  const newId = options.newToolCallId ?? randomToolCallId;
  const candidates = response.candidates ?? [];
  const choices = candidates.map((candidate, position) => {
    const { text, toolCalls } = readParts(candidate.content?.parts, newId);
    const message: Record<string, unknown> = { role: "assistant", content: text || (toolCalls.length > 0 ? null : ""), refusal: null };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return { index: candidate.index ?? position, message, logprobs: null, finish_reason: mapGeminiFinishReason(candidate.finishReason, toolCalls.length > 0) };
  });
  if (choices.length === 0) {
    // The prompt itself was blocked (promptFeedback.blockReason): still HTTP 200 upstream.
    choices.push({ index: 0, message: { role: "assistant", content: null, refusal: null }, logprobs: null, finish_reason: "content_filter" });
  }
  const completion: ChatCompletion = {
    id: response.responseId ?? `chatcmpl-${options.created}`,
    object: "chat.completion",
    created: options.created,
    model: response.modelVersion ?? options.model,
    choices,
  };
  const usage = geminiChatUsage(response);
  if (usage) completion.usage = usage;
  return completion;
}

/**
 * A whole answer's usage, or undefined when Gemini did not report it (the gateway then bills its
 * estimate, docs/decisions.md §3): no usageMetadata, no promptTokenCount, or no
 * candidatesTokenCount beside an answer that wrote something. proto3 JSON leaves a zero count
 * out, so a missing output count is zero only where nothing was written (a blocked prompt).
 */
export function geminiChatUsage(response: GeminiResponse): ChatUsage | undefined {
  return reportedUsage(
    response.usageMetadata,
    (response.candidates ?? []).some((candidate) => wroteOutput(candidate.content?.parts)),
  );
}

function reportedUsage(usage: GeminiUsageMetadata | undefined, wrote: boolean): ChatUsage | undefined {
  if (usage?.promptTokenCount == null) return undefined;
  if (usage.candidatesTokenCount == null && wrote) return undefined;
  return convertGeminiUsage(usage);
}

/** Text or a function call the client sees (thought summaries are not the answer). */
function wroteOutput(parts: GeminiResponsePart[] | undefined): boolean {
  return (parts ?? []).some((part) => !part.thought && ((typeof part.text === "string" && part.text.length > 0) || part.functionCall !== undefined));
}

/** The counts as reported, an absent one 0. Thinking tokens are billed as output by Google, so they count as completion tokens here. */
export function convertGeminiUsage(usage: GeminiUsageMetadata | undefined): ChatUsage {
  const prompt = (usage?.promptTokenCount ?? 0) + (usage?.toolUsePromptTokenCount ?? 0);
  const reasoning = usage?.thoughtsTokenCount ?? 0;
  const completion = (usage?.candidatesTokenCount ?? 0) + reasoning;
  const result: ChatUsage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage?.cachedContentTokenCount ?? 0 },
  };
  if (reasoning > 0) result.completion_tokens_details = { reasoning_tokens: reasoning };
  return result;
}

interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
  extra_content?: { google: { thought_signature: string } };
}

function readParts(parts: GeminiResponsePart[] | undefined, newId: ToolCallIdSource): { text: string; toolCalls: ToolCall[] } {
  let text = "";
  const toolCalls: ToolCall[] = [];
  for (const part of parts ?? []) {
    if (part.thought) continue; // thought summaries are not part of the answer
    if (typeof part.text === "string") text += part.text;
    if (part.functionCall) toolCalls.push(toolCall(part, newId));
  }
  return { text, toolCalls };
}

/** The thought signature travels in `extra_content.google`, as Google's own OpenAI facade does. */
function toolCall(part: GeminiResponsePart, newId: ToolCallIdSource): ToolCall {
  const call = part.functionCall!;
  const converted: ToolCall = { id: call.id || newId(), type: "function", function: { name: call.name ?? "", arguments: JSON.stringify(call.args ?? {}) } };
  if (part.thoughtSignature) converted.extra_content = { google: { thought_signature: part.thoughtSignature } };
  return converted;
}

interface ChoiceState {
  toolCalls: number;
  finished: boolean;
}

/**
 * One stream's worth of state. Gemini sends whole function calls, each becomes a header delta
 * (id, name) and one arguments delta. Every chunk may carry usage; the last one seen counts and
 * goes out in the usage chunk from `finish()` when the body ends (there is no terminator).
 */
export class GeminiStreamConverter {
  private readonly choices = new Map<number, ChoiceState>();
  private usage: GeminiUsageMetadata | undefined;
  /** Some text or function call went out: a usage without an output count is then no usage. */
  private wrote = false;
  private id: string;
  private model: string;
  private readonly newId: ToolCallIdSource;

  constructor(private readonly options: ConvertFromGeminiOptions) {
    this.id = `chatcmpl-${options.created}`;
    this.model = options.model;
    this.newId = options.newToolCallId ?? randomToolCallId;
  }

  /** Every choice that started has finished. */
  get finished(): boolean {
    return this.choices.size > 0 && [...this.choices.values()].every((choice) => choice.finished);
  }

  push(response: GeminiResponse): ChatChunk[] {
    if (this.choices.size === 0) {
      if (response.responseId) this.id = response.responseId;
      if (response.modelVersion) this.model = response.modelVersion;
    }
    if (response.usageMetadata) this.usage = response.usageMetadata;
    const chunks: ChatChunk[] = [];
    const candidates: GeminiCandidate[] = response.candidates ?? [];
    if (candidates.length === 0 && this.choices.size === 0) {
      this.choices.set(0, { toolCalls: 0, finished: false });
      chunks.push(this.chunk(0, { role: "assistant", content: "" }));
    }
    candidates.forEach((candidate, position) => {
      chunks.push(...this.candidate(candidate.index ?? position, candidate));
    });
    if (response.promptFeedback?.blockReason && candidates.length === 0) {
      for (const [index, choice] of this.choices) {
        if (!choice.finished) chunks.push(this.finish(index, choice, "content_filter"));
      }
    }
    return chunks;
  }

  /** After the body ended: the usage chunk, when Gemini reported usage (else the gateway estimates it). */
  end(): ChatChunk[] {
    const usage = reportedUsage(this.usage, this.wrote);
    if (!usage) return [];
    return [{ id: this.id, object: "chat.completion.chunk", created: this.options.created, model: this.model, choices: [], usage }];
  }

  private candidate(index: number, candidate: GeminiCandidate): ChatChunk[] {
    const chunks: ChatChunk[] = [];
    let choice = this.choices.get(index);
    if (!choice) {
      choice = { toolCalls: 0, finished: false };
      this.choices.set(index, choice);
      chunks.push(this.chunk(index, { role: "assistant", content: "" }));
    }
    if (wroteOutput(candidate.content?.parts)) this.wrote = true;
    for (const part of candidate.content?.parts ?? []) {
      if (part.thought) continue;
      if (typeof part.text === "string" && part.text) chunks.push(this.chunk(index, { content: part.text }));
      if (part.functionCall) {
        const call = toolCall(part, this.newId);
        const toolIndex = choice.toolCalls++;
        const header: Record<string, unknown> = { index: toolIndex, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } };
        if (call.extra_content) header.extra_content = call.extra_content;
        chunks.push(this.chunk(index, { tool_calls: [header] }));
        chunks.push(this.chunk(index, { tool_calls: [{ index: toolIndex, function: { arguments: call.function.arguments } }] }));
      }
    }
    if (candidate.finishReason && !choice.finished)
      chunks.push(this.finish(index, choice, mapGeminiFinishReason(candidate.finishReason, choice.toolCalls > 0)));
    return chunks;
  }

  private finish(index: number, choice: ChoiceState, reason: string): ChatChunk {
    choice.finished = true;
    return this.chunk(index, {}, reason);
  }

  private chunk(index: number, delta: Record<string, unknown>, finishReason: string | null = null): ChatChunk {
    return {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.options.created,
      model: this.model,
      choices: [{ index, delta, logprobs: null, finish_reason: finishReason }],
    };
  }
}
