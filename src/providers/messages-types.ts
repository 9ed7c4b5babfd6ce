// The native messages capability: Anthropic's Messages API spoken as is, for upstreams that
// speak it natively (lossless: content blocks, thinking, cache_control, betas pass through).
import type { JsonObject } from "./chat-types.js";

/** One upstream SSE event, its data left as the vendor's JSON text. */
export interface NativeMessagesEvent {
  event: string;
  data: string;
}

export interface MessagesCallOptions {
  signal: AbortSignal;
  /** Client headers to forward (anthropic-version, anthropic-beta). */
  headers: Record<string, string>;
  /** This attempt's wait for the answer to begin (see ChatCallOptions). */
  firstByteTimeoutMs?: number;
  /** When the request's total time runs out (see ChatCallOptions). */
  deadline?: number;
  /** The output cap the call's credits were reserved for, sent as max_tokens (see ChatCallOptions). */
  maxOutputTokens?: number;
}

export interface MessagesCapability {
  create(body: JsonObject, options: MessagesCallOptions): Promise<{ body: JsonObject; upstreamRequestId?: string }>;
  /** Resolves once the upstream answered 2xx; events arrive in the batches they were read in. */
  stream(body: JsonObject, options: MessagesCallOptions): Promise<{ events: AsyncIterable<NativeMessagesEvent[]>; upstreamRequestId?: string }>;
  /** The vendor's own count of a prompt's input tokens: `{input_tokens}` as it answered. */
  countTokens?(body: JsonObject, options: MessagesCallOptions): Promise<{ body: JsonObject; upstreamRequestId?: string }>;
}
