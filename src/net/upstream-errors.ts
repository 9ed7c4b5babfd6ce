// How an upstream call fails, vendor-neutral: the upstream answered a non-2xx status, or it could
// not be reached, was too slow, broke the connection or answered too much. The gateway decides
// from these whether to retry, fall back to the next route, or pass the answer through. Providers
// re-export them (provider-errors.ts), so the upstream client never imports a provider module.

export interface UpstreamHttpErrorFields {
  provider: string;
  status: number;
  /** Its raw text, or for vendors whose wire format is not OpenAI's, the OpenAI error envelope built from it. */
  body: string;
  contentType: string;
  /** Milliseconds the upstream asked us to wait (Retry-After / retry-after-ms), if any. */
  retryAfterMs?: number;
  /** The vendor's own body, when `body` is the envelope built from it (for endpoints that speak that vendor's format). */
  vendorBody?: string;
  /** What was asked of the upstream (its path without the query), to say what it lacks. */
  request?: { method: string; path: string };
}

/** The upstream answered with a non-2xx status. */
export class UpstreamHttpError extends Error {
  readonly provider: string;
  readonly status: number;
  readonly body: string;
  readonly contentType: string;
  readonly retryAfterMs: number | undefined;
  readonly vendorBody: string | undefined;
  readonly request: { method: string; path: string } | undefined;

  constructor(fields: UpstreamHttpErrorFields) {
    super(`${fields.provider} answered HTTP ${fields.status}`);
    this.name = "UpstreamHttpError";
    this.provider = fields.provider;
    this.status = fields.status;
    this.body = fields.body;
    this.contentType = fields.contentType;
    this.retryAfterMs = fields.retryAfterMs;
    this.vendorBody = fields.vendorBody;
    this.request = fields.request;
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

/** The failures that are the upstream being too slow: a request that only met these is 504. */
export function isTimeoutFailure(failure: NetworkFailure): boolean {
  return failure === "connect_timeout" || failure === "first_byte_timeout" || failure === "idle_timeout" || failure === "total_timeout";
}

/**
 * A status worth asking again, the same upstream or the next: rate limited (429), timed out
 * (408), a conflict that a vendor's lock on concurrent requests answers (409), or the upstream
 * failing (5xx). The one rule for chat attempts, tool calls and the video poller.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || status === 409 || status >= 500;
}
