// How an upstream attempt ended, in a few fixed words: what metrics count by. The log keeps the
// cause in words ("connection refused by 10.0.0.5:8000"); a metric label must stay a small, fixed
// set of values and never carry a host, a vendor's message or anything else unbounded.
import { type NetworkFailure, UpstreamHttpError, UpstreamNetworkError } from "../../providers/provider-errors.js";

/**
 * ok: the upstream answered; upstream_error: it answered an error about the request (passed
 * through); failed: it failed (retried or the next route tried); abandoned: neither (the client
 * went away, or the request was refused before the call).
 */
export type AttemptOutcome = "ok" | "upstream_error" | "failed" | "abandoned";

/** Why a failed attempt failed: the network failure kinds, or the upstream's status class. */
export type FailureCause = NetworkFailure | "http_429" | "http_5xx" | "http_4xx" | "upstream_auth" | "no_endpoint" | "other";

/** The cause of an attempt that upstream-attempts.ts judged a failure. */
export function failureCause(error: unknown): FailureCause {
  if (error instanceof UpstreamNetworkError) return error.failure;
  if (error instanceof UpstreamHttpError) {
    const { status } = error;
    if (status === 429) return "http_429";
    if (status >= 500) return "http_5xx";
    if (status === 401 || status === 403) return "upstream_auth";
    if (status === 404 || status === 405) return "no_endpoint";
    return "http_4xx";
  }
  return "other";
}
