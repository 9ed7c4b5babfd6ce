// OpenAI's Responses API natively (POST /v1/responses), for `openai` providers marked
// `responsesApi: true`: the body goes out as the gateway built it, with the output cap reserved
// for as max_output_tokens; the Response and every stream event come back untouched for the
// gateway to relay. Errors are OpenAI's own envelope, passed on as they came.
import { isObject, looksLikeJsonObject, preview } from "../../json/json-values.js";
import { toNetworkError } from "../../net/upstream-http.js";
import { requireJsonObject } from "../chat-answer.js";
import type { JsonObject } from "../chat-types.js";
import { withOutputCap } from "../max-tokens.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import type { NativeResponsesEvent, ResponsesCallOptions, ResponsesCapability } from "../responses-types.js";
import { readServerSentEventBatches } from "../sse.js";
import { openaiRequest } from "./openai-request.js";

export function createOpenAIResponses(context: ProviderContext): ResponsesCapability {
  const vendor = openaiRequest(context);

  function send(body: JsonObject, { signal, firstByteTimeoutMs, deadline, maxOutputTokens }: ResponsesCallOptions) {
    const json = withOutputCap(body, maxOutputTokens, "max_output_tokens");
    return vendor.send({ path: "/responses", json, answer: "chat", signal, firstByteTimeoutMs, deadline, mapError: false });
  }

  return {
    async create(body, options) {
      const response = await send({ ...body, stream: false }, options);
      const answer = requireJsonObject(context.name, await vendor.readJson(response, options.signal), "a Response");
      if (!Array.isArray(answer.output) || !answer.output.every(isObject)) {
        throw new UpstreamNetworkError(context.name, "invalid_response", "the Response has no output list");
      }
      return { body: answer, upstreamRequestId: vendor.requestId(response) };
    },

    async stream(body, options) {
      const response = await send({ ...body, stream: true }, options);
      return { events: nativeEvents(context, response.body, options.signal), upstreamRequestId: vendor.requestId(response) };
    },
  };
}

/** The upstream's events as they came (`event:` name, `data:` JSON text); a line that cannot be a JSON object is skipped. */
async function* nativeEvents(context: ProviderContext, body: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncGenerator<NativeResponsesEvent[]> {
  const provider = context.name;
  try {
    for await (const batch of readServerSentEventBatches(body, context.redact)) {
      const events: NativeResponsesEvent[] = [];
      for (const message of batch) {
        if (looksLikeJsonObject(message.data)) events.push({ event: message.event ?? "message", data: message.data });
        else context.warn(`${provider}: skipped a stream event that is not a JSON object (${message.event ?? "message"}): ${preview(message.data)}`);
      }
      if (events.length > 0) yield events;
    }
  } catch (error) {
    throw toNetworkError(provider, error, signal);
  }
}
