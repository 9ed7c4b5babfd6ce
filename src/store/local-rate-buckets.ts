// The rate-limit buckets of one gw process: token buckets in memory that refill continuously, on
// this process's monotonic clock. A refused request is told one wait, computed once: until every
// bucket holds one again, i.e. until it would be admitted (Retry-After and the message); the
// x-ratelimit-reset-* headers say something else, until each bucket is full.
import type { Admission, LimitState, RateLimitBuckets } from "./rate-buckets.js";

interface Bucket {
  capacity: number;
  level: number;
  updatedAt: number;
}

export class LocalRateBuckets implements RateLimitBuckets {
  private readonly requestBuckets = new Map<string, Bucket>();
  private readonly tokenBuckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * Take one request from the key's request bucket, unless the key is over its tokens per minute.
   * Refused requests take nothing.
   */
  admit(key: string, requestsPerMinute: number, tokensPerMinute?: number): Promise<Admission> {
    return Promise.resolve(this.take(key, requestsPerMinute, tokensPerMinute));
  }

  private take(key: string, requestsPerMinute: number, tokensPerMinute: number | undefined): Admission {
    const now = this.now();
    const requests = refill(this.requestBuckets, key, requestsPerMinute, now);
    const tokens = tokensPerMinute === undefined ? undefined : refill(this.tokenBuckets, key, tokensPerMinute, now);
    // Both limits count: a key out of tokens and of requests waits for the later of the two.
    const requestsWaitMs = msUntilOne(requests);
    const tokensWaitMs = tokens ? msUntilOne(tokens) : 0;
    const waitMs = Math.max(requestsWaitMs, tokensWaitMs);
    let refusedBy: Admission["refusedBy"];
    if (waitMs > 0) refusedBy = tokensWaitMs > requestsWaitMs ? "tokens" : "requests";
    else requests.level -= 1;
    return { retryAfterSeconds: Math.ceil(waitMs / 1000), refusedBy, requests: stateOf(requests), tokens: tokens && stateOf(tokens) };
  }

  /** Count tokens a call used against its key (a no-op for keys without a token limit). */
  spendTokens(key: string, tokens: number): void {
    const bucket = this.tokenBuckets.get(key);
    if (!bucket || tokens <= 0) return;
    refill(this.tokenBuckets, key, bucket.capacity, this.now());
    bucket.level -= tokens; // may go below zero: the key then waits until it has paid it back
  }
}

function refill(buckets: Map<string, Bucket>, key: string, capacity: number, now: number): Bucket {
  let bucket = buckets.get(key);
  if (!bucket) {
    bucket = { capacity, level: capacity, updatedAt: now };
    buckets.set(key, bucket);
    return bucket;
  }
  // A limit changed by `gw keys set` takes effect at once; the level never exceeds it.
  bucket.capacity = capacity;
  bucket.level = Math.min(capacity, bucket.level + ((now - bucket.updatedAt) * capacity) / 60_000);
  bucket.updatedAt = now;
  return bucket;
}

/** Milliseconds until the bucket holds one (a request, a token) again; 0 when it does. */
function msUntilOne(bucket: Bucket): number {
  return bucket.level >= 1 ? 0 : ((1 - bucket.level) * 60_000) / bucket.capacity;
}

function stateOf(bucket: Bucket): LimitState {
  return {
    limit: bucket.capacity,
    remaining: Math.max(0, Math.floor(bucket.level)),
    resetMs: Math.max(0, Math.ceil(((bucket.capacity - bucket.level) * 60_000) / bucket.capacity)),
  };
}
