// Requests and tokens per minute per key, as token buckets: the port under the rate limiter. One
// process keeps its buckets in memory (gateway/auth/rate-limiter.ts); several gw instances share
// them in Redis (RedisRateBuckets), where a take is one atomic script on the server's clock. Both
// answer the same conformance suite (test/state/rate-buckets.conformance.ts).

/** One limit's state, as OpenAI's x-ratelimit-* headers report it. */
export interface LimitState {
  limit: number;
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

export interface Admission {
  /** 0 when admitted, else the whole seconds (rounded up) until the request would be admitted. */
  retryAfterSeconds: number;
  /** Which limit refused, when one did: the one that holds the request longest. */
  refusedBy?: "requests" | "tokens";
  requests: LimitState;
  tokens?: LimitState;
}

/** One request to take from a key's buckets: `admit`'s arguments, for a credit hold that takes it in the same step (CreditStore.hold). */
export interface RateTake {
  key: string;
  requestsPerMinute: number;
  tokensPerMinute?: number;
}

/** The buckets of every key. */
export interface RateLimitBuckets {
  /**
   * Take one request from the key's request bucket, unless the key is over its tokens per minute
   * (then the token bucket's wait decides). A refused request takes nothing. A limit changed by
   * `gw keys set` takes effect at once; a bucket never holds more than its limit.
   */
  admit(key: string, requestsPerMinute: number, tokensPerMinute?: number): Promise<Admission>;
  /**
   * Count tokens a call used against its key; a no-op for keys without a token limit (no bucket
   * yet). A bucket may go below zero: the key then waits until it has paid it back. Never fails
   * the call that spent them (an implementation that cannot count them logs it).
   */
  spendTokens(key: string, tokens: number): void;
}

/** A bucket's size and what it holds now (a request's or a token's worth each). */
export interface BucketLevel {
  capacity: number;
  level: number;
}

/**
 * What a take tells its request, from the buckets' levels after it (as they were, when refused).
 * A refused request is told one wait, computed once: until every bucket holds one again, i.e.
 * until it would be admitted (Retry-After and the message); the x-ratelimit-reset-* headers say
 * something else, until each bucket is full. Both limits count: the one that holds the request
 * longer refuses it.
 */
export function admissionOf(admitted: boolean, requests: BucketLevel, tokens: BucketLevel | undefined): Admission {
  let waitMs = 0;
  let refusedBy: Admission["refusedBy"];
  if (!admitted) {
    const requestsWaitMs = msUntilOne(requests);
    const tokensWaitMs = tokens ? msUntilOne(tokens) : 0;
    waitMs = Math.max(requestsWaitMs, tokensWaitMs);
    refusedBy = tokensWaitMs > requestsWaitMs ? "tokens" : "requests";
  }
  return { retryAfterSeconds: Math.ceil(waitMs / 1000), refusedBy, requests: stateOf(requests), tokens: tokens && stateOf(tokens) };
}

/** Milliseconds until the bucket holds one (a request, a token) again; 0 when it does. */
export function msUntilOne(bucket: BucketLevel): number {
  return bucket.level >= 1 ? 0 : ((1 - bucket.level) * 60_000) / bucket.capacity;
}

function stateOf(bucket: BucketLevel): LimitState {
  return {
    limit: bucket.capacity,
    remaining: Math.max(0, Math.floor(bucket.level)),
    resetMs: Math.max(0, Math.ceil(((bucket.capacity - bucket.level) * 60_000) / bucket.capacity)),
  };
}
