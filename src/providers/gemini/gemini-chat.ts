// Chat completions against Gemini's generateContent / streamGenerateContent?alt=sse: OpenAI-shaped
// requests are converted out (pictures by URL downloaded first: inline-gemini-image-urls.ts),
// Gemini's answers and chunks converted back. Gemini sends no documented request-id header, so no
// upstreamRequestId is reported.

import { isObject, parseJsonObject, preview } from "../../json/json-values.js";
import { requireJsonObject } from "../chat-answer.js";
import type { ChatCallOptions, ChatCapability, ChatRequest, ChatStreamEvent } from "../chat-types.js";
import { withOutputCap } from "../max-tokens.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { convertEventBatches } from "../sse.js";
import { convertFromGeminiChat, GeminiStreamConverter } from "./convert-from-gemini-chat.js";
import { convertToGeminiChat } from "./convert-to-gemini-chat.js";
import type { GeminiResponse } from "./gemini-api.js";
import { fromGeminiStreamError } from "./gemini-error.js";
import { geminiModelPath, geminiRequest } from "./gemini-request.js";
import { inlineGeminiImageUrls } from "./inline-gemini-image-urls.js";

export function createGeminiChat(context: ProviderContext): ChatCapability {
  const vendor = geminiRequest(context);
  // Pictures by URL are downloaded once per request, not again for each retry of it.
  const inlined = new WeakMap<ChatRequest, Promise<ChatRequest>>();
  function withInlineImages(request: ChatRequest, signal: AbortSignal): Promise<ChatRequest> {
    let prepared = inlined.get(request);
    if (!prepared) {
      prepared = inlineGeminiImageUrls(request, context.fetchUrl, signal);
      inlined.set(request, prepared);
    }
    return prepared;
  }

  function send(request: ChatRequest, method: string, { signal, firstByteTimeoutMs, deadline, maxOutputTokens }: ChatCallOptions) {
    // The cap reserved for, as the one max_tokens the converter makes generationConfig.maxOutputTokens of.
    const json = convertToGeminiChat(withOutputCap(request, maxOutputTokens, "max_tokens"));
    return vendor.send({ path: geminiModelPath(request.model, method), json, answer: "chat", signal, firstByteTimeoutMs, deadline });
  }

  return {
    async complete(request, options) {
      const { signal } = options;
      const response = await send(await withInlineImages(request, signal), "generateContent", options);
      const body = requireJsonObject(context.name, await vendor.readJson(response, signal), "a generateContent answer") as GeminiResponse;
      return { body: convertFromGeminiChat(body, { model: request.model, created: nowSeconds() }) };
    },

    async stream(request, options) {
      const { signal } = options;
      const response = await send(await withInlineImages(request, signal), "streamGenerateContent?alt=sse", options);
      const converter = new GeminiStreamConverter({ model: request.model, created: nowSeconds() });
      return { chunks: convertChunks(context, response.body, converter, signal) };
    },
  };
}

async function* convertChunks(
  context: ProviderContext,
  body: AsyncIterable<Uint8Array>,
  converter: GeminiStreamConverter,
  signal: AbortSignal,
): AsyncGenerator<ChatStreamEvent[]> {
  const provider = context.name;
  yield* convertEventBatches(provider, body, context.redact, signal, (message) => {
    const response = parseJsonObject(message.data) as GeminiResponse | undefined;
    if (!response) {
      // One bad line does not cost the good chunks read with it.
      context.warn(`${provider}: skipped a stream chunk that is not a JSON object: ${preview(message.data)}`);
      return [];
    }
    if (isObject(response.error)) throw fromGeminiStreamError(provider, message.data);
    return converter.push(response);
  });
  // No terminator either: a body that ends before a finishReason was cut off.
  if (!converter.finished) throw new UpstreamNetworkError(provider, "connection_lost", "the stream ended before a finishReason");
  const usage = converter.end();
  if (usage.length > 0) yield usage;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
