// Anthropic Messages response -> OpenAI chat.completion, and Anthropic stream events -> OpenAI
// chat.completion.chunk objects (https://platform.claude.com/docs/en/api/messages, https://platform.claude.com/docs/en/build-with-claude/streaming). Pure.
// With a JSON response_format, the forced answer tool's call (`answerTool`, see
// convert-to-anthropic-answer-tool.ts) is the message's content as JSON text, finishing with stop.
import type { ChatChunk, ChatCompletion, ChatUsage } from "../chat-types.js";
import type { AnthropicMessageResponse, AnthropicStreamEvent, AnthropicUsage } from "./anthropic-api.js";
import { mapAnthropicFinishReason } from "./map-anthropic-finish-reason.js";

export function convertFromAnthropicChat(response: AnthropicMessageResponse, fallbackModel: string, created: number, answerTool?: string): ChatCompletion {
  let text = "";
  const toolCalls: Array<Record<string, unknown>> = [];
  for (const block of response.content ?? []) {
    if (block.type === "text" && typeof block.text === "string") text += block.text;
    else if (block.type === "tool_use" && answerTool !== undefined && block.name === answerTool) text += JSON.stringify(block.input ?? {});
    else if (block.type === "tool_use") {
      toolCalls.push({ id: block.id ?? "", type: "function", function: { name: block.name ?? "", arguments: JSON.stringify(block.input ?? {}) } });
    }
    // thinking, redacted_thinking and server-tool blocks have no OpenAI counterpart.
  }
  const message: Record<string, unknown> = { role: "assistant", content: text || (toolCalls.length > 0 ? null : ""), refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: response.id ?? `msg_${created}`,
    object: "chat.completion",
    created,
    model: response.model ?? fallbackModel,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(response.stop_reason, toolCalls.length > 0) }],
    usage: convertAnthropicUsage(response.usage),
  };
}

/** The forced answer tool's tool_use stop is the answer's end: `stop`, as OpenAI's structured output finishes. */
function finishReason(stopReason: string | null | undefined, calledTools: boolean): string {
  return stopReason === "tool_use" && !calledTools ? "stop" : mapAnthropicFinishReason(stopReason);
}

/**
 * Total input = input + cache writes + cache reads (input_tokens excludes the cached parts); the
 * writes, priced apart, also go in `cache_write_tokens` (OpenRouter's name for them). Undefined
 * when Anthropic reported no counts: zeros would bill the call as free.
 */
export function convertAnthropicUsage(usage: AnthropicUsage | undefined): ChatUsage | undefined {
  if (usage?.input_tokens == null || usage.output_tokens == null) return undefined;
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  const prompt = usage.input_tokens + cacheWrite + cacheRead;
  const completion = usage.output_tokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: cacheWrite > 0 ? { cached_tokens: cacheRead, cache_write_tokens: cacheWrite } : { cached_tokens: cacheRead },
  };
}

/**
 * One stream's worth of state: Anthropic events in, OpenAI chunks out. Tool calls are numbered
 * among tool blocks only (OpenAI's `index`), not by Anthropic's block index. The finish chunk and
 * the usage chunk go out at `message_stop`, once every `message_delta` has been seen. The final
 * output count is message_delta's: message_start's is a placeholder (1), so a stream whose
 * message_delta names none has no usage, and the gateway estimates it (docs/decisions.md §3).
 */
export class AnthropicStreamConverter {
  finished = false;
  private id: string;
  private model: string;
  private usage: AnthropicUsage = {};
  private stopReason: string | null | undefined;
  private readonly toolIndexByBlock = new Map<number, number>();
  /** Anthropic's block index of the answer tool's call, whose input is streamed as content. */
  private answerBlock: number | undefined;

  constructor(
    model: string,
    private readonly created: number,
    private readonly answerTool?: string,
  ) {
    this.id = `msg_${created}`;
    this.model = model;
  }

  push(event: AnthropicStreamEvent): ChatChunk[] {
    switch (event.type) {
      case "message_start":
        if (event.message?.id) this.id = event.message.id;
        if (event.message?.model) this.model = event.message.model;
        // Its output_tokens is a placeholder: the count comes with message_delta, or not at all.
        this.mergeUsage({ ...event.message?.usage, output_tokens: undefined });
        return [this.chunk({ role: "assistant", content: "" })];
      case "content_block_start":
        return this.blockStart(event);
      case "content_block_delta":
        return this.blockDelta(event);
      case "message_delta":
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason;
        this.mergeUsage(event.usage);
        return [];
      case "message_stop":
        this.finished = true;
        return [this.chunk({}, finishReason(this.stopReason, this.toolIndexByBlock.size > 0)), ...this.usageChunk()];
      default:
        // ping, content_block_stop and event types added later carry nothing for OpenAI.
        return [];
    }
  }

  private blockStart(event: AnthropicStreamEvent): ChatChunk[] {
    const block = event.content_block;
    if (block?.type === "text" && block.text) return [this.chunk({ content: block.text })];
    if (block?.type !== "tool_use" || event.index === undefined) return [];
    if (this.answerTool !== undefined && block.name === this.answerTool) {
      this.answerBlock = event.index;
      return [];
    }
    const index = this.toolIndexByBlock.size;
    this.toolIndexByBlock.set(event.index, index);
    return [this.chunk({ tool_calls: [{ index, id: block.id ?? "", type: "function", function: { name: block.name ?? "", arguments: "" } }] })];
  }

  private blockDelta(event: AnthropicStreamEvent): ChatChunk[] {
    const delta = event.delta;
    if (delta?.type === "text_delta" && delta.text) return [this.chunk({ content: delta.text })];
    if (delta?.type === "input_json_delta" && delta.partial_json && event.index !== undefined) {
      if (event.index === this.answerBlock) return [this.chunk({ content: delta.partial_json })];
      const index = this.toolIndexByBlock.get(event.index);
      if (index !== undefined) return [this.chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] })];
    }
    // thinking_delta, signature_delta and citations_delta are dropped.
    return [];
  }

  /** Usage counts in message_delta are cumulative: later values replace earlier ones. */
  private mergeUsage(usage: AnthropicUsage | undefined): void {
    for (const [key, value] of Object.entries(usage ?? {})) {
      if (typeof value === "number") this.usage[key as keyof AnthropicUsage] = value;
    }
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null = null): ChatChunk {
    return {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
  }

  /** The usage chunk, when Anthropic reported counts (else the gateway estimates them). */
  private usageChunk(): ChatChunk[] {
    const usage = convertAnthropicUsage(this.usage);
    return usage ? [{ id: this.id, object: "chat.completion.chunk", created: this.created, model: this.model, choices: [], usage }] : [];
  }
}
