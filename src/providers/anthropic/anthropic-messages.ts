// The messages endpoint's native path: a Messages API request goes to Anthropic as it came
// (model id aside) with the client's anthropic-version / anthropic-beta; the answer and every
// stream event come back untouched for the gateway to relay.
import type { JsonObject } from "../chat-types.js";
import type { MessagesCapability, MessagesCallOptions, NativeMessagesEvent } from "../messages-types.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamHttpError, UpstreamNetworkError } from "../provider-errors.js";
import { readServerSentEventBatches } from "../sse.js";
import { toNetworkError, type UpstreamResponse } from "../../net/upstream-http.js";
import { anthropicEndpoint, anthropicHeaders, anthropicRequestId } from "./anthropic-chat.js";
import { fromAnthropicHttpError, fromAnthropicStreamError } from "./anthropic-error.js";

export function createAnthropicMessages(context: ProviderContext): MessagesCapability {
  const target = anthropicEndpoint(context);
  const baseHeaders = anthropicHeaders(context);

  async function send(body: JsonObject, options: MessagesCallOptions): Promise<UpstreamResponse> {
    const headers = { ...baseHeaders, ...options.headers };
    try {
      return await context.http.send({ provider: context.name, target, headers, body: JSON.stringify(body), signal: options.signal }, context.upstream);
    } catch (error) {
      throw error instanceof UpstreamHttpError ? fromAnthropicHttpError(error) : error;
    }
  }

  return {
    async create(body, options) {
      const response = await send({ ...body, stream: false }, options);
      try {
        return { body: (await response.body.json()) as JsonObject, upstreamRequestId: anthropicRequestId(response.headers) };
      } catch (error) {
        if (error instanceof SyntaxError) throw new UpstreamNetworkError(context.name, "invalid_response", "the body is not JSON");
        throw toNetworkError(context.name, error, options.signal);
      }
    },

    async stream(body, options) {
      const response = await send({ ...body, stream: true }, options);
      return { events: nativeEvents(context.name, response.body, options.signal), upstreamRequestId: anthropicRequestId(response.headers) };
    },
  };
}

async function* nativeEvents(provider: string, body: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncGenerator<NativeMessagesEvent[]> {
  let started = false;
  try {
    for await (const batch of readServerSentEventBatches(body)) {
      const events = batch.map((message) => ({ event: message.event ?? "message", data: message.data }));
      // An error before anything was relayed is an HTTP error in disguise: retried or returned.
      if (!started && events[0]?.event === "error") throw fromAnthropicStreamError(provider, events[0].data);
      started = true;
      yield events;
    }
  } catch (error) {
    throw toNetworkError(provider, error, signal);
  }
}
