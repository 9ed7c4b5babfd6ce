// The embeddings capability, vendor-neutral: texts (or token ids) in, one vector per input out.
// The request keeps OpenAI's shapes, since an `openai`-type upstream takes them as they are;
// other vendors convert. Routing, billing and the answer's encoding are the gateway's
// (gateway/embeddings).

/** OpenAI's `input`: one text, several texts, one token-id array, or several. */
export type EmbeddingInput = string | string[] | number[] | number[][];

/** How the caller wants vectors: JSON numbers, or base64 of little-endian float32 bytes. */
export type EmbeddingEncoding = "float" | "base64";

export interface EmbeddingRequest {
  /** The vendor's model id. */
  model: string;
  input: EmbeddingInput;
  /** The encoding the caller asked for: a vendor that has it answers in it, others in floats. */
  encoding: EmbeddingEncoding;
  /** Shorter vectors, for models that can cut theirs. */
  dimensions?: number;
  /** The caller's end-user id, for vendors that take one. */
  user?: string;
}

/** One vector as the vendor sent it: floats, or base64 of little-endian float32 bytes. */
export type EmbeddingVector = number[] | string;

export interface EmbeddingAnswer {
  /** One vector per input, in the order of the inputs. */
  vectors: EmbeddingVector[];
  /** The vendor's usage in OpenAI's shape (`prompt_tokens`), unchecked; undefined when it sends none. */
  usage?: unknown;
  upstreamRequestId?: string;
}

export interface EmbeddingCallOptions {
  signal: AbortSignal;
  /** How long to wait for the answer to begin (the rest of the request's deadline). */
  firstByteTimeoutMs: number;
  /** performance.now() when the request's total time runs out: the whole answer must be in by then. */
  deadline?: number;
}

export interface EmbeddingCapability {
  /**
   * Throws UpstreamHttpError / UpstreamNetworkError on a vendor failure (an answer without one
   * well-formed vector per input is `invalid_response`), UnsupportedContentError for an input the
   * vendor cannot take.
   */
  embed(request: EmbeddingRequest, options: EmbeddingCallOptions): Promise<EmbeddingAnswer>;
}

/** The inputs as a list: each text, or each token-id array, is one vector. */
export function embeddingInputs(input: EmbeddingInput): string[] | number[][] {
  if (typeof input === "string") return [input];
  if (input.length > 0 && typeof input[0] === "number") return [input as number[]];
  return input as string[] | number[][];
}
