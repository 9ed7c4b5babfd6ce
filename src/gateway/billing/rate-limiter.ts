// Requests and tokens per minute per key: token buckets that refill continuously. A request takes
// one from its key's request bucket before any work; tokens are taken from the key's token bucket
// once a call's usage is known, so a key over its tokens per minute is refused until the bucket
// has refilled (docs/decisions.md §10).

/** One limit's state, as OpenAI's x-ratelimit-* headers report it. */
export interface LimitState {
  limit: number;
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

export interface Admission {
  /** 0 when admitted, else whole seconds to wait. */
  retryAfterSeconds: number;
  /** Which limit refused, when one did. */
  refusedBy?: "requests" | "tokens";
  requests: LimitState;
  tokens?: LimitState;
}

interface Bucket {
  capacity: number;
  level: number;
  updatedAt: number;
}

export class RateLimiter {
  private readonly requestBuckets = new Map<string, Bucket>();
  private readonly tokenBuckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * Take one request from the key's request bucket, unless the key is over its tokens per minute.
   * Refused requests take nothing.
   */
  admit(key: string, requestsPerMinute: number, tokensPerMinute?: number): Admission {
    const now = this.now();
    const requests = refill(this.requestBuckets, key, requestsPerMinute, now);
    const tokens = tokensPerMinute === undefined ? undefined : refill(this.tokenBuckets, key, tokensPerMinute, now);
    let retryAfterSeconds = 0;
    let refusedBy: Admission["refusedBy"];
    if (tokens && tokens.level < 1) {
      refusedBy = "tokens";
      retryAfterSeconds = secondsUntil(tokens, 1);
    } else if (requests.level < 1) {
      refusedBy = "requests";
      retryAfterSeconds = secondsUntil(requests, 1);
    } else requests.level -= 1;
    return { retryAfterSeconds, refusedBy, requests: stateOf(requests), tokens: tokens && stateOf(tokens) };
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

function secondsUntil(bucket: Bucket, level: number): number {
  return Math.max(1, Math.ceil(((level - bucket.level) * 60) / bucket.capacity));
}

function stateOf(bucket: Bucket): LimitState {
  return {
    limit: bucket.capacity,
    remaining: Math.max(0, Math.floor(bucket.level)),
    resetMs: Math.max(0, Math.ceil(((bucket.capacity - bucket.level) * 60_000) / bucket.capacity)),
  };
}
