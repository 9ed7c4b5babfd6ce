// The messages endpoint's native path: a Messages API request goes to Anthropic as it came
// (model id aside) with the client's anthropic-version / anthropic-beta; the answer and every
// stream event come back untouched for the gateway to relay. count_tokens likewise.

import { looksLikeJsonObject, preview } from "../../json/json-values.js";
import { toNetworkError } from "../../net/upstream-http.js";
import { requireJsonObject } from "../chat-answer.js";
import type { JsonObject } from "../chat-types.js";
import { withOutputCap } from "../max-tokens.js";
import type { MessagesCallOptions, MessagesCapability, NativeMessagesEvent } from "../messages-types.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { readServerSentEventBatches } from "../sse.js";
import { requireAnthropicMessage } from "./anthropic-chat.js";
import { fromAnthropicStreamError } from "./anthropic-error.js";
import { anthropicRequest } from "./anthropic-request.js";

export function createAnthropicMessages(context: ProviderContext): MessagesCapability {
  const vendor = anthropicRequest(context);

  function send(body: JsonObject, options: MessagesCallOptions) {
    // Exactly the cap reserved for, as max_tokens, and no other cap field; the client's
    // anthropic-version / anthropic-beta over the provider's.
    const json = withOutputCap(body, options.maxOutputTokens, "max_tokens");
    const { signal, firstByteTimeoutMs, deadline, headers } = options;
    return vendor.send({ path: "/v1/messages", json, headers, answer: "chat", signal, firstByteTimeoutMs, deadline });
  }

  return {
    async create(body, options) {
      const response = await send({ ...body, stream: false }, options);
      const message = requireAnthropicMessage(context.name, await vendor.readJson(response, options.signal));
      return { body: message as unknown as JsonObject, upstreamRequestId: vendor.requestId(response) };
    },

    async stream(body, options) {
      const response = await send({ ...body, stream: true }, options);
      return { events: nativeEvents(context, response.body, options.signal), upstreamRequestId: vendor.requestId(response) };
    },

    async countTokens(body, options) {
      const { signal, firstByteTimeoutMs, deadline, headers } = options;
      const response = await vendor.send({ path: "/v1/messages/count_tokens", json: body, headers, answer: "chat", signal, firstByteTimeoutMs, deadline });
      const count = requireJsonObject(context.name, await vendor.readJson(response, signal), "a token count");
      if (!Number.isSafeInteger(count.input_tokens) || (count.input_tokens as number) < 0) {
        throw new UpstreamNetworkError(context.name, "invalid_response", "the token count has no input_tokens");
      }
      return { body: count as JsonObject, upstreamRequestId: vendor.requestId(response) };
    },
  };
}

async function* nativeEvents(context: ProviderContext, body: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncGenerator<NativeMessagesEvent[]> {
  const provider = context.name;
  let started = false;
  try {
    for await (const batch of readServerSentEventBatches(body, context.redact)) {
      const events: NativeMessagesEvent[] = [];
      for (const message of batch) {
        // Relayed unparsed: a line that cannot be a JSON object is skipped, the good ones kept.
        if (looksLikeJsonObject(message.data)) events.push({ event: message.event ?? "message", data: message.data });
        else context.warn(`${provider}: skipped a stream event that is not a JSON object (${message.event ?? "message"}): ${preview(message.data)}`);
      }
      if (events.length === 0) continue;
      // An error before anything was relayed is an HTTP error in disguise: retried or returned.
      if (!started && events[0]?.event === "error") throw fromAnthropicStreamError(provider, events[0].data);
      started = true;
      yield events;
    }
  } catch (error) {
    throw toNetworkError(provider, error, signal);
  }
}
