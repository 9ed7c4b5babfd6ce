// OpenAI's x-ratelimit-* headers on every authenticated response: the key's requests per minute,
// and its tokens per minute when it has a token limit. Durations in OpenAI's form ("20ms", "1.5s", "6m0s").
import type { Admission, LimitState } from "../gateway/billing/rate-limiter.js";

export function setRateLimitHeaders(headers: Headers, admission: Admission): void {
  setLimit(headers, "requests", admission.requests);
  if (admission.tokens) setLimit(headers, "tokens", admission.tokens);
}

function setLimit(headers: Headers, unit: "requests" | "tokens", state: LimitState): void {
  headers.set(`x-ratelimit-limit-${unit}`, String(state.limit));
  headers.set(`x-ratelimit-remaining-${unit}`, String(state.remaining));
  headers.set(`x-ratelimit-reset-${unit}`, formatReset(state.resetMs));
}

export function formatReset(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.ceil(milliseconds)}ms`;
  if (milliseconds < 60_000) return `${Number((milliseconds / 1000).toFixed(3))}s`;
  const minutes = Math.floor(milliseconds / 60_000);
  return `${minutes}m${Math.ceil((milliseconds - minutes * 60_000) / 1000)}s`;
}
