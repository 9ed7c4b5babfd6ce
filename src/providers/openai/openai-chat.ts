// Chat completions against OpenAI and every OpenAI-compatible server (OpenRouter, Groq, vLLM,
// Ollama, llama.cpp): the request goes out as it came, always asking for streamed usage.
import type { ChatCapability, ChatCompletion, ChatRequest, ChatStreamEvent } from "../chat-types.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { readServerSentEventBatches } from "../sse.js";
import { toNetworkError, upstreamTarget } from "../../net/upstream-http.js";

export function createOpenAIChat(context: ProviderContext): ChatCapability {
  const baseUrl = (context.config.baseUrl ?? "https://api.openai.com/v1").replace(/\/+$/, "");
  const target = upstreamTarget(`${baseUrl}/chat/completions`);
  const headers: Record<string, string> = { "content-type": "application/json", ...context.config.headers };
  if (context.config.apiKey) headers.authorization = `Bearer ${context.config.apiKey}`;

  async function send(request: ChatRequest, signal: AbortSignal) {
    return context.http.send({ provider: context.name, target, headers, body: JSON.stringify(request), signal }, context.upstream);
  }

  return {
    async complete(request, { signal }) {
      const response = await send({ ...request, stream: false }, signal);
      let body: ChatCompletion;
      try {
        body = (await response.body.json()) as ChatCompletion;
      } catch (error) {
        throw invalidOrLost(context.name, error, signal);
      }
      return { body, upstreamRequestId: requestIdOf(response.headers) };
    },

    async stream(request, { signal }) {
      const streamOptions = { ...(request.stream_options as object | undefined), include_usage: true };
      const response = await send({ ...request, stream: true, stream_options: streamOptions }, signal);
      return { chunks: parseChunks(context.name, response.body, signal), upstreamRequestId: requestIdOf(response.headers) };
    },
  };
}

/**
 * The upstream's `data:` payloads, batch by batch, until `[DONE]`. Parsed later, only if needed.
 * The body is read to its natural end (it ends right after `[DONE]`): leaving the loop early
 * would destroy it with an AbortError, whose stack trace costs more than the read.
 */
async function* parseChunks(provider: string, body: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncGenerator<ChatStreamEvent[]> {
  let finished = false;
  try {
    for await (const batch of readServerSentEventBatches(body)) {
      if (finished) continue;
      const events: ChatStreamEvent[] = [];
      for (const event of batch) {
        if (event.data === "[DONE]") {
          finished = true;
          break;
        }
        events.push(event.data);
      }
      if (events.length > 0) yield events;
    }
  } catch (error) {
    throw toNetworkError(provider, error, signal);
  }
}

function invalidOrLost(provider: string, error: unknown, signal: AbortSignal): Error {
  if (error instanceof SyntaxError) return new UpstreamNetworkError(provider, "invalid_response", "the body is not JSON");
  return toNetworkError(provider, error, signal);
}

function requestIdOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers["x-request-id"];
  return Array.isArray(value) ? value[0] : value;
}
