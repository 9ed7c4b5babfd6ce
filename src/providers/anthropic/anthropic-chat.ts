// Chat completions against Anthropic's Messages API: OpenAI-shaped requests are converted out,
// Anthropic's answers and stream events converted back (a JSON response_format's answer tool call
// as the message's content).

import { parseJsonObject, preview } from "../../json/json-values.js";
import { requireJsonObject } from "../chat-answer.js";
import type { ChatCallOptions, ChatCapability, ChatRequest, ChatStreamEvent } from "../chat-types.js";
import { withOutputCap } from "../max-tokens.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { convertEventBatches } from "../sse.js";
import type { AnthropicMessageResponse, AnthropicStreamEvent } from "./anthropic-api.js";
import { fromAnthropicStreamError } from "./anthropic-error.js";
import { anthropicRequest } from "./anthropic-request.js";
import { AnthropicStreamConverter, convertFromAnthropicChat } from "./convert-from-anthropic-chat.js";
import { answerToolFor } from "./convert-to-anthropic-answer-tool.js";
import { convertToAnthropicChat, DEFAULT_MAX_TOKENS } from "./convert-to-anthropic-chat.js";

export interface AnthropicChatOptions {
  /** max_tokens for requests that name none (Anthropic requires one). */
  defaultMaxTokens?: number;
}

export function createAnthropicChat(context: ProviderContext, options: AnthropicChatOptions = {}): ChatCapability {
  const vendor = anthropicRequest(context);
  const settings = { defaultMaxTokens: options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS };

  function send(request: ChatRequest, stream: boolean, { signal, firstByteTimeoutMs, deadline, maxOutputTokens }: ChatCallOptions) {
    // The cap reserved for, as the one max_tokens the converter reads.
    const json = { ...convertToAnthropicChat(withOutputCap(request, maxOutputTokens, "max_tokens"), settings), stream };
    return vendor.send({ path: "/v1/messages", json, answer: "chat", signal, firstByteTimeoutMs, deadline });
  }

  return {
    async complete(request, options) {
      const { signal } = options;
      const response = await send(request, false, options);
      const body = requireAnthropicMessage(context.name, await vendor.readJson(response, signal));
      return {
        body: convertFromAnthropicChat(body, request.model, nowSeconds(), answerToolFor(request.response_format)?.name),
        upstreamRequestId: vendor.requestId(response),
      };
    },

    async stream(request, options) {
      const { signal } = options;
      const response = await send(request, true, options);
      const converter = new AnthropicStreamConverter(request.model, nowSeconds(), answerToolFor(request.response_format)?.name);
      return { chunks: convertEvents(context, response.body, converter, signal), upstreamRequestId: vendor.requestId(response) };
    },
  };
}

async function* convertEvents(
  context: ProviderContext,
  body: AsyncIterable<Uint8Array>,
  converter: AnthropicStreamConverter,
  signal: AbortSignal,
): AsyncGenerator<ChatStreamEvent[]> {
  const provider = context.name;
  yield* convertEventBatches(provider, body, context.redact, signal, (message) => {
    if (message.event === "error") throw fromAnthropicStreamError(provider, message.data);
    const event = parseJsonObject(message.data) as AnthropicStreamEvent | undefined;
    if (!event) {
      // One bad line does not cost the good events read with it.
      context.warn(`${provider}: skipped a stream event that is not a JSON object (${message.event ?? "message"}): ${preview(message.data)}`);
      return [];
    }
    if (event.type === "error") throw fromAnthropicStreamError(provider, message.data);
    return converter.push(event);
  });
  // There is no [DONE]: a body that ends before message_stop was cut off.
  if (!converter.finished) throw new UpstreamNetworkError(provider, "connection_lost", "the stream ended before message_stop");
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** An answer of the Messages API: an object with a content list (anything else is the upstream's fault). */
export function requireAnthropicMessage(provider: string, body: unknown): AnthropicMessageResponse {
  const message = requireJsonObject(provider, body, "a message");
  if (!Array.isArray(message.content)) throw new UpstreamNetworkError(provider, "invalid_response", "the message has no content list");
  return message as unknown as AnthropicMessageResponse;
}
