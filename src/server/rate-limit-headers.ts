// OpenAI's x-ratelimit-* headers on every authenticated response: the key's requests per minute,
// and its tokens per minute when it has a token limit. Durations in OpenAI's form ("20ms", "1.5s", "6m0s").
import type { Admission, LimitState } from "../store/rate-buckets.js";

/** Header names built once: these are set on every authenticated response. */
const HEADER_NAMES = {
  requests: ["x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"],
  tokens: ["x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"],
} as const;

export function setRateLimitHeaders(headers: Headers, admission: Admission): void {
  setLimit(headers, HEADER_NAMES.requests, admission.requests);
  if (admission.tokens) setLimit(headers, HEADER_NAMES.tokens, admission.tokens);
}

function setLimit(headers: Headers, [limit, remaining, reset]: readonly [string, string, string], state: LimitState): void {
  headers.set(limit, String(state.limit));
  headers.set(remaining, String(state.remaining));
  headers.set(reset, formatReset(state.resetMs));
}

export function formatReset(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.ceil(milliseconds)}ms`;
  if (milliseconds < 60_000) return `${Number((milliseconds / 1000).toFixed(3))}s`;
  const minutes = Math.floor(milliseconds / 60_000);
  return `${minutes}m${Math.ceil((milliseconds - minutes * 60_000) / 1000)}s`;
}
