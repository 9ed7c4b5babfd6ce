// How an upstream call fails, vendor-neutral: the upstream answered a non-2xx status, or it could
// not be reached, was too slow, broke the connection or answered too much. The gateway decides
// from these whether to retry, fall back to the next route, or pass the answer through. Providers
// re-export them (provider-errors.ts), so the upstream client never imports a provider module.

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

/** The failures that are the upstream being too slow: a request that only met these is 504. */
export function isTimeoutFailure(failure: NetworkFailure): boolean {
  return failure === "connect_timeout" || failure === "first_byte_timeout" || failure === "idle_timeout" || failure === "total_timeout";
}
