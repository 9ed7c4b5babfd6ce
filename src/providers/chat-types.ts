// The chat capability: every chat provider speaks OpenAI's chat-completions shapes at this
// boundary (vendors with another wire format convert in their own folder).

export type JsonObject = Record<string, unknown>;

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number } & JsonObject;
  [extra: string]: unknown;
}

/** A chat.completion body (only the fields the gateway reads are typed). */
export interface ChatCompletion extends JsonObject {
  id: string;
  model: string;
  choices: JsonObject[];
  usage?: ChatUsage;
}

/** One chat.completion.chunk. */
export interface ChatChunk extends JsonObject {
  id?: string;
  model?: string;
  choices?: Array<{ index?: number; delta?: JsonObject; finish_reason?: string | null } & JsonObject>;
  usage?: ChatUsage | null;
}

/** The request as sent upstream: OpenAI chat-completions body with the upstream model id. */
export type ChatRequest = JsonObject & { model: string; messages: JsonObject[]; stream?: boolean };

export interface ChatCallOptions {
  signal: AbortSignal;
  /** This attempt's wait for the answer to begin, when shorter than the provider's own (the request's deadline). */
  firstByteTimeoutMs?: number;
  /** performance.now() when the request's total time runs out: the answer, a stream's last byte too, must be in by then. */
  deadline?: number;
  /**
   * The output cap the call's credits were reserved for (the request's, or what the balance pays
   * for when it named none): sent in the one field the vendor reads, in place of every cap field
   * the request has (max-tokens.ts). Without it, the request's own smallest cap.
   */
  maxOutputTokens?: number;
}

export interface ChatResponse {
  body: ChatCompletion;
  upstreamRequestId?: string;
}

/**
 * One streamed chat.completion.chunk: an object, or its JSON text when the vendor already speaks
 * OpenAI's format (forwarded without a parse/serialize round trip where possible).
 */
export type ChatStreamEvent = ChatChunk | string;

export interface ChatStreamResponse {
  /** Events in the batches they arrived in from the upstream. */
  chunks: AsyncIterable<ChatStreamEvent[]>;
  upstreamRequestId?: string;
}

export interface ChatCapability {
  complete(request: ChatRequest, options: ChatCallOptions): Promise<ChatResponse>;
  /** Resolves once the upstream accepted the request (2xx); chunks then arrive as they are produced. */
  stream(request: ChatRequest, options: ChatCallOptions): Promise<ChatStreamResponse>;
}
