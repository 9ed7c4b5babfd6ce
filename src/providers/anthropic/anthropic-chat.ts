// Chat completions against Anthropic's Messages API: OpenAI-shaped requests are converted out,
// Anthropic's answers and stream events converted back (a JSON response_format's answer tool call
// as the message's content).

import type { Redact } from "../../net/secret-redaction.js";
import { toNetworkError, type UpstreamResponse, type UpstreamTarget, upstreamRequestIdOf, upstreamTarget } from "../../net/upstream-http.js";
import { requireJsonObject } from "../chat-answer.js";
import type { ChatCallOptions, ChatCapability, ChatRequest, ChatStreamEvent } from "../chat-types.js";
import { withOutputCap } from "../max-tokens.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamHttpError, UpstreamNetworkError } from "../provider-errors.js";
import { parseJsonObject, preview, readRedactedJson, readServerSentEventBatches } from "../sse.js";
import type { AnthropicMessageResponse, AnthropicStreamEvent } from "./anthropic-api-types.js";
import { fromAnthropicHttpError, fromAnthropicStreamError } from "./anthropic-error.js";
import { AnthropicStreamConverter, convertFromAnthropicChat } from "./convert-from-anthropic-chat.js";
import { answerToolFor } from "./convert-to-anthropic-answer-tool.js";
import { convertToAnthropicChat, DEFAULT_MAX_TOKENS } from "./convert-to-anthropic-chat.js";

export const ANTHROPIC_VERSION = "2023-06-01";

export interface AnthropicChatOptions {
  /** max_tokens for requests that name none (Anthropic requires one). */
  defaultMaxTokens?: number;
}

/** POST {baseUrl}/v1/messages; the base URL is the API origin, one ending in /v1 works too. */
export function anthropicEndpoint(context: ProviderContext): UpstreamTarget {
  const baseUrl = (context.config.baseUrl ?? "https://api.anthropic.com").replace(/\/+$/, "");
  return upstreamTarget(baseUrl.endsWith("/v1") ? `${baseUrl}/messages` : `${baseUrl}/v1/messages`);
}

export function anthropicHeaders(context: ProviderContext): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION, ...context.config.headers };
  if (context.config.apiKey) headers["x-api-key"] = context.config.apiKey;
  return headers;
}

export function createAnthropicChat(context: ProviderContext, options: AnthropicChatOptions = {}): ChatCapability {
  const target = anthropicEndpoint(context);
  const headers = anthropicHeaders(context);
  const settings = { defaultMaxTokens: options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS };

  async function send(
    request: ChatRequest,
    stream: boolean,
    { signal, firstByteTimeoutMs, deadline, maxOutputTokens }: ChatCallOptions,
  ): Promise<UpstreamResponse> {
    // The cap reserved for, as the one max_tokens the converter reads.
    const body = JSON.stringify({ ...convertToAnthropicChat(withOutputCap(request, maxOutputTokens, "max_tokens"), settings), stream });
    try {
      return await context.http.send(
        { provider: context.name, target, headers, body, signal, firstByteTimeoutMs, deadline, answer: "chat", redact: context.redact },
        context.upstream,
      );
    } catch (error) {
      throw error instanceof UpstreamHttpError ? fromAnthropicHttpError(error) : error;
    }
  }

  return {
    async complete(request, options) {
      const { signal } = options;
      const response = await send(request, false, options);
      const body = requireAnthropicMessage(context.name, await readRedactedJson(context, response, signal));
      return {
        body: convertFromAnthropicChat(body, request.model, nowSeconds(), answerToolFor(request.response_format)?.name),
        upstreamRequestId: anthropicRequestId(response.headers, context.redact),
      };
    },

    async stream(request, options) {
      const { signal } = options;
      const response = await send(request, true, options);
      const converter = new AnthropicStreamConverter(request.model, nowSeconds(), answerToolFor(request.response_format)?.name);
      return { chunks: convertEvents(context, response.body, converter, signal), upstreamRequestId: anthropicRequestId(response.headers, context.redact) };
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
  try {
    for await (const batch of readServerSentEventBatches(body, context.redact)) {
      const chunks: ChatStreamEvent[] = [];
      for (const message of batch) {
        if (message.event === "error") throw fromAnthropicStreamError(provider, message.data);
        const event = parseJsonObject(message.data) as AnthropicStreamEvent | undefined;
        if (!event) {
          // One bad line does not cost the good events read with it.
          context.warn(`${provider}: skipped a stream event that is not a JSON object (${message.event ?? "message"}): ${preview(message.data)}`);
          continue;
        }
        if (event.type === "error") throw fromAnthropicStreamError(provider, message.data);
        chunks.push(...converter.push(event));
      }
      if (chunks.length > 0) yield chunks;
    }
  } catch (error) {
    throw toNetworkError(provider, error, signal);
  }
  // There is no [DONE]: a body that ends before message_stop was cut off.
  if (!converter.finished) throw new UpstreamNetworkError(provider, "connection_lost", "the stream ended before message_stop");
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function anthropicRequestId(headers: UpstreamResponse["headers"], redact: Redact): string | undefined {
  return upstreamRequestIdOf(headers, "request-id", redact);
}

/** An answer of the Messages API: an object with a content list (anything else is the upstream's fault). */
export function requireAnthropicMessage(provider: string, body: unknown): AnthropicMessageResponse {
  const message = requireJsonObject(provider, body, "a message");
  if (!Array.isArray(message.content)) throw new UpstreamNetworkError(provider, "invalid_response", "the message has no content list");
  return message as unknown as AnthropicMessageResponse;
}
