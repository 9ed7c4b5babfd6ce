// Chat completions against OpenAI and every OpenAI-compatible server (OpenRouter, Groq, vLLM,
// Ollama, llama.cpp): the request goes out as it came, always asking for streamed usage.
import type { ChatCapability, ChatChunk, ChatCompletion, ChatRequest } from "../chat-types.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { readServerSentEvents } from "../sse.js";
import { toNetworkError } from "../../net/upstream-http.js";

export function createOpenAIChat(context: ProviderContext): ChatCapability {
  const baseUrl = (context.config.baseUrl ?? "https://api.openai.com/v1").replace(/\/+$/, "");
  const url = `${baseUrl}/chat/completions`;
  const headers: Record<string, string> = { "content-type": "application/json", ...context.config.headers };
  if (context.config.apiKey) headers.authorization = `Bearer ${context.config.apiKey}`;

  async function send(request: ChatRequest, signal: AbortSignal) {
    return context.http.send({ provider: context.name, url, headers, body: JSON.stringify(request), signal }, context.upstream);
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

async function* parseChunks(provider: string, body: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncGenerator<ChatChunk> {
  try {
    for await (const event of readServerSentEvents(body)) {
      if (event.data === "[DONE]") return;
      let chunk: ChatChunk;
      try {
        chunk = JSON.parse(event.data) as ChatChunk;
      } catch {
        throw new UpstreamNetworkError(provider, "invalid_response", "a stream event is not JSON");
      }
      yield chunk;
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
