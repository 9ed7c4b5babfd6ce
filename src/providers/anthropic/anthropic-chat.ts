// Chat completions against Anthropic's Messages API: OpenAI-shaped requests are converted out,
// Anthropic's answers and stream events converted back.
import type { ChatCapability, ChatRequest, ChatStreamEvent } from "../chat-types.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamHttpError, UpstreamNetworkError } from "../provider-errors.js";
import { readServerSentEventBatches } from "../sse.js";
import { toNetworkError, upstreamTarget, type UpstreamResponse, type UpstreamTarget } from "../../net/upstream-http.js";
import type { AnthropicMessageResponse, AnthropicStreamEvent } from "./anthropic-api-types.js";
import { fromAnthropicHttpError, fromAnthropicStreamError } from "./anthropic-error.js";
import { AnthropicStreamConverter, convertFromAnthropicChat } from "./convert-from-anthropic-chat.js";
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

  async function send(request: ChatRequest, stream: boolean, signal: AbortSignal): Promise<UpstreamResponse> {
    const body = JSON.stringify({ ...convertToAnthropicChat(request, settings), stream });
    try {
      return await context.http.send({ provider: context.name, target, headers, body, signal }, context.upstream);
    } catch (error) {
      throw error instanceof UpstreamHttpError ? fromAnthropicHttpError(error) : error;
    }
  }

  return {
    async complete(request, { signal }) {
      const response = await send(request, false, signal);
      let body: AnthropicMessageResponse;
      try {
        body = (await response.body.json()) as AnthropicMessageResponse;
      } catch (error) {
        if (error instanceof SyntaxError) throw new UpstreamNetworkError(context.name, "invalid_response", "the body is not JSON");
        throw toNetworkError(context.name, error, signal);
      }
      return { body: convertFromAnthropicChat(body, request.model, nowSeconds()), upstreamRequestId: anthropicRequestId(response.headers) };
    },

    async stream(request, { signal }) {
      const response = await send(request, true, signal);
      const converter = new AnthropicStreamConverter(request.model, nowSeconds());
      return { chunks: convertEvents(context.name, response.body, converter, signal), upstreamRequestId: anthropicRequestId(response.headers) };
    },
  };
}

async function* convertEvents(
  provider: string,
  body: AsyncIterable<Uint8Array>,
  converter: AnthropicStreamConverter,
  signal: AbortSignal,
): AsyncGenerator<ChatStreamEvent[]> {
  try {
    for await (const batch of readServerSentEventBatches(body)) {
      const chunks: ChatStreamEvent[] = [];
      for (const message of batch) {
        if (message.event === "error") throw fromAnthropicStreamError(provider, message.data);
        let event: AnthropicStreamEvent;
        try {
          event = JSON.parse(message.data) as AnthropicStreamEvent;
        } catch {
          throw new UpstreamNetworkError(provider, "invalid_response", `an event is not JSON (${message.event ?? "message"})`);
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

export function anthropicRequestId(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers["request-id"];
  return Array.isArray(value) ? value[0] : value;
}
