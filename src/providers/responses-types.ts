// The native Responses capability: OpenAI's Responses API (POST /v1/responses) spoken as is, for
// `openai` upstreams marked `responsesApi: true` (lossless: reasoning items and their encrypted
// content, hosted tools and fields gw does not know pass through; docs/decisions.md §19).
import type { ChatCallOptions, JsonObject } from "./chat-types.js";

/** One upstream SSE event, its data left as the vendor's JSON text. */
export interface NativeResponsesEvent {
  event: string;
  data: string;
}

/** The signal, the attempt's bounds and the reserved output cap, sent as max_output_tokens (see ChatCallOptions). */
export type ResponsesCallOptions = ChatCallOptions;

export interface ResponsesCapability {
  create(body: JsonObject, options: ResponsesCallOptions): Promise<{ body: JsonObject; upstreamRequestId?: string }>;
  /** Resolves once the upstream answered 2xx; events arrive in the batches they were read in. */
  stream(body: JsonObject, options: ResponsesCallOptions): Promise<{ events: AsyncIterable<NativeResponsesEvent[]>; upstreamRequestId?: string }>;
}
