// Chat completions against OpenAI and every OpenAI-compatible server (OpenRouter, Groq, vLLM,
// Ollama, llama.cpp): the request goes out as it came, always asking for streamed usage.

import { looksLikeJsonObject, preview } from "../../json/json-values.js";
import type { Redact } from "../../net/secret-redaction.js";
import { toNetworkError } from "../../net/upstream-http.js";
import { requireChatCompletion } from "../chat-answer.js";
import type { ChatCallOptions, ChatCapability, ChatRequest, ChatStreamEvent } from "../chat-types.js";
import { withOutputCap } from "../max-tokens.js";
import type { ProviderContext } from "../provider.js";
import { readServerSentEventBatches } from "../sse.js";
import { OPENAI_BASE_URL } from "./openai-api.js";
import { openaiRequest } from "./openai-request.js";

export function createOpenAIChat(context: ProviderContext): ChatCapability {
  const vendor = openaiRequest(context);
  // The one field the output cap goes in: OpenAI's reasoning models refuse max_tokens; many
  // compatible servers know only max_tokens.
  const maxTokensField =
    context.config.maxTokensField ??
    (new URL(context.config.baseUrl ?? OPENAI_BASE_URL).hostname === "api.openai.com" ? "max_completion_tokens" : "max_tokens");

  function send(request: ChatRequest, { signal, firstByteTimeoutMs, deadline, maxOutputTokens }: ChatCallOptions) {
    const json = withOutputCap(request, maxOutputTokens, maxTokensField);
    // The error answer is already OpenAI's: passed on as it came.
    return vendor.send({ path: "/chat/completions", json, answer: "chat", signal, firstByteTimeoutMs, deadline, mapError: false });
  }

  return {
    async complete(request, options) {
      const { signal } = options;
      const response = await send({ ...request, stream: false }, options);
      const body = requireChatCompletion(context.name, await vendor.readJson(response, signal));
      return { body, upstreamRequestId: vendor.requestId(response) };
    },

    async stream(request, options) {
      const { signal } = options;
      const streamOptions = { ...(request.stream_options as object | undefined), include_usage: true };
      const response = await send({ ...request, stream: true, stream_options: streamOptions }, options);
      return {
        chunks: parseChunks(context.name, response.body, signal, context.redact, (reason) => context.warn(`${context.name}: skipped ${reason}`)),
        upstreamRequestId: vendor.requestId(response),
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
