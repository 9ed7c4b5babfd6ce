// Chat completions against OpenAI and every OpenAI-compatible server (OpenRouter, Groq, vLLM,
// Ollama, llama.cpp): the request goes out as it came, always asking for streamed usage.

import type { Redact } from "../../net/secret-redaction.js";
import { toNetworkError, upstreamRequestIdOf, upstreamTarget } from "../../net/upstream-http.js";
import { requireChatCompletion } from "../chat-answer.js";
import type { ChatCallOptions, ChatCapability, ChatRequest, ChatStreamEvent } from "../chat-types.js";
import { withOutputCap } from "../max-tokens.js";
import type { ProviderContext } from "../provider.js";
import { looksLikeJsonObject, preview, readRedactedJson, readServerSentEventBatches } from "../sse.js";

export function createOpenAIChat(context: ProviderContext): ChatCapability {
  const baseUrl = (context.config.baseUrl ?? "https://api.openai.com/v1").replace(/\/+$/, "");
  const target = upstreamTarget(`${baseUrl}/chat/completions`);
  const headers: Record<string, string> = { "content-type": "application/json", ...context.config.headers };
  if (context.config.apiKey) headers.authorization = `Bearer ${context.config.apiKey}`;
  // The one field the output cap goes in: OpenAI's reasoning models refuse max_tokens; many
  // compatible servers know only max_tokens.
  const maxTokensField = context.config.maxTokensField ?? (new URL(baseUrl).hostname === "api.openai.com" ? "max_completion_tokens" : "max_tokens");

  async function send(request: ChatRequest, { signal, firstByteTimeoutMs, deadline, maxOutputTokens }: ChatCallOptions) {
    const body = JSON.stringify(withOutputCap(request, maxOutputTokens, maxTokensField));
    return context.http.send(
      { provider: context.name, target, headers, body, signal, firstByteTimeoutMs, deadline, answer: "chat", redact: context.redact },
      context.upstream,
    );
  }

  return {
    async complete(request, options) {
      const { signal } = options;
      const response = await send({ ...request, stream: false }, options);
      const body = requireChatCompletion(context.name, await readRedactedJson(context, response, signal));
      return { body, upstreamRequestId: upstreamRequestIdOf(response.headers, "x-request-id", context.redact) };
    },

    async stream(request, options) {
      const { signal } = options;
      const streamOptions = { ...(request.stream_options as object | undefined), include_usage: true };
      const response = await send({ ...request, stream: true, stream_options: streamOptions }, options);
      return {
        chunks: parseChunks(context.name, response.body, signal, context.redact, (reason) => context.warn(`${context.name}: skipped ${reason}`)),
        upstreamRequestId: upstreamRequestIdOf(response.headers, "x-request-id", context.redact),
      };
    },
  };
}

/**
 * The upstream's `data:` payloads, batch by batch, until `[DONE]`. Parsed later, only if needed.
 * The body is read to its natural end (it ends right after `[DONE]`): leaving the loop early
 * would destroy it with an AbortError, whose stack trace costs more than the read.
 */
async function* parseChunks(
  provider: string,
  body: AsyncIterable<Uint8Array>,
  signal: AbortSignal,
  redact: Redact,
  skipped: (reason: string) => void,
): AsyncGenerator<ChatStreamEvent[]> {
  let finished = false;
  try {
    for await (const batch of readServerSentEventBatches(body, redact)) {
      if (finished) continue;
      const events: ChatStreamEvent[] = [];
      for (const event of batch) {
        if (event.data === "[DONE]") {
          finished = true;
          break;
        }
        if (looksLikeJsonObject(event.data)) events.push(event.data);
        else skipped(`a stream event is not a JSON object: ${preview(event.data)}`);
      }
      if (events.length > 0) yield events;
    }
  } catch (error) {
    throw toNetworkError(provider, error, signal);
  }
}
