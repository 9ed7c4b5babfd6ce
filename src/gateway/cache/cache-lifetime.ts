// Whether a request's answer is cached, and for how long (docs/decisions.md §22): the request's
// own `x-gw-cache` header decides first (a lifetime, or `no-store`), then its key's lifetime
// (`gw keys create|set --cache`), which applies only to answers that do not sample: a sampled
// request (temperature above 0, or left to the upstream's default) is cached only when it asks.
import { parseLifetimeSeconds } from "../../text/durations.js";
import { InvalidRequestError } from "../errors.js";

/** The request header that asks for the cache (a lifetime) or refuses it (`no-store`); the answer's header says hit or miss. */
export const CACHE_HEADER = "x-gw-cache";

/** The cache's lifetime for this request in seconds, or undefined when its answer is not cached. */
export function cacheLifetime(header: string | null, keyTtlSeconds: number | undefined, sampled: boolean, maxTtlSeconds: number): number | undefined {
  if (header === null) return sampled ? undefined : keyTtlSeconds && Math.min(keyTtlSeconds, maxTtlSeconds);
  const value = header.trim().toLowerCase();
  if (value === "no-store") return undefined;
  const seconds = parseLifetimeSeconds(value);
  if (seconds === undefined)
    throw new InvalidRequestError(`Invalid ${CACHE_HEADER} header "${header}": expected a lifetime (300, 90s, 15m, 12h, 7d) or no-store.`, {
      param: CACHE_HEADER,
    });
  if (seconds > maxTtlSeconds)
    throw new InvalidRequestError(`Invalid ${CACHE_HEADER} header "${header}": the longest lifetime this gateway caches is ${maxTtlSeconds} seconds.`, {
      param: CACHE_HEADER,
    });
  return seconds;
}

/** Whether a chat-style request samples its answer: a temperature above 0, or none given (the upstreams' default is 1). */
export function samplesAnswer(request: { temperature?: number | null }): boolean {
  return request.temperature === undefined || request.temperature === null || request.temperature > 0;
}
