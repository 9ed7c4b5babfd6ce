// Vendor-neutral failures a provider reports. The gateway decides from them whether to retry,
// fall back to the next route, or pass the upstream's answer through verbatim.

/**
 * The upstream answered with a non-2xx status. `body` is its raw text, or for vendors whose wire
 * format is not OpenAI's, the OpenAI error envelope built from it; `vendorBody` then keeps the
 * vendor's own body (for endpoints that speak that vendor's format).
 */
export class UpstreamHttpError extends Error {
  constructor(
    readonly provider: string,
    readonly status: number,
    readonly body: string,
    readonly contentType: string,
    /** Milliseconds the upstream asked us to wait (Retry-After / retry-after-ms), if any. */
    readonly retryAfterMs: number | undefined,
    readonly vendorBody?: string,
    /** What was asked of the upstream (its path without the query), to say what it lacks. */
    readonly request?: { method: string; path: string },
  ) {
    super(`${provider} answered HTTP ${status}`);
    this.name = "UpstreamHttpError";
  }
}

/**
 * connect_timeout: no connection within connectTimeoutMs; total_timeout: the request's total
 * deadline ran out while the answer was still arriving; answer_too_large: the answer passed the
 * capability's size cap (the call ends there, billed what was held: docs/decisions.md §4).
 */
export type NetworkFailure =
  | "connect"
  | "connect_timeout"
  | "first_byte_timeout"
  | "idle_timeout"
  | "total_timeout"
  | "connection_lost"
  | "invalid_response"
  | "answer_too_large";

/** The upstream could not be reached, was too slow, or broke the connection. */
export class UpstreamNetworkError extends Error {
  constructor(
    readonly provider: string,
    readonly failure: NetworkFailure,
    /** The cause in words ("connection refused by 10.0.0.5:8000"). */
    readonly detail: string,
  ) {
    super(`${provider}: ${detail}`);
    this.name = "UpstreamNetworkError";
  }
}

/**
 * The request holds something this vendor cannot take (an image by URL for Gemini, n > 1 for
 * Anthropic ...). Found before any upstream call; the caller's fault, so a 400.
 */
export class UnsupportedContentError extends Error {
  constructor(
    message: string,
    /** The request parameter at fault, as a JSON path (`messages[2].content[1]`), when known. */
    readonly param?: string,
  ) {
    super(message);
    this.name = "UnsupportedContentError";
  }
}

/** OpenAI's error `type` for an HTTP status: what vendor errors are translated into. */
export function openaiErrorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  return status >= 500 ? "server_error" : "invalid_request_error";
}

/** What a vendor's error says, in OpenAI's terms: the fields of `{"error":{...}}`. */
export interface OpenAIErrorEnvelope {
  message: string;
  /** Defaults to `openaiErrorType` of the status. */
  type?: string;
  param?: string | null;
  code: string;
}

export interface EnvelopeOptions {
  /** The status to answer instead of the upstream's (a vendor that says 400 for a bad key). */
  status?: number;
  /** The wait assumed when the upstream gave none (a vendor's own retry hint in its body). */
  retryAfterMs?: number;
  /** The wait assumed for a 429 when the upstream gave none (a vendor known to rate-limit so). */
  rateLimitPauseMs?: number;
}

/**
 * A vendor's error as the OpenAI error envelope (`application/json`), kept on a new
 * UpstreamHttpError: the status kept (unless `options.status`), the vendor's body kept as
 * `vendorBody`, the upstream's Retry-After kept or else the options' defaults.
 */
export function withOpenAIEnvelope(error: UpstreamHttpError, envelope: OpenAIErrorEnvelope, options: EnvelopeOptions = {}): UpstreamHttpError {
  const status = options.status ?? error.status;
  const body = JSON.stringify({
    error: { message: envelope.message, type: envelope.type ?? openaiErrorType(status), param: envelope.param ?? null, code: envelope.code },
  });
  const retryAfterMs = error.retryAfterMs ?? options.retryAfterMs ?? (status === 429 ? options.rateLimitPauseMs : undefined);
  return new UpstreamHttpError(error.provider, status, body, "application/json", retryAfterMs, error.body, error.request);
}
