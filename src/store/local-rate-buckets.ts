// The rate-limit buckets of one gw process: token buckets in memory that refill continuously, on
// this process's monotonic clock (what a take answers: rate-buckets.ts admissionOf).
import { type Admission, admissionOf, msUntilOne, type RateLimitBuckets } from "./rate-buckets.js";

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

  /** `admit` without the promise, for the credit store that takes a request in the same step as its hold (LocalCreditStore). */
  take(key: string, requestsPerMinute: number, tokensPerMinute: number | undefined): Admission {
    const now = this.now();
    const requests = refill(this.requestBuckets, key, requestsPerMinute, now);
    const tokens = tokensPerMinute === undefined ? undefined : refill(this.tokenBuckets, key, tokensPerMinute, now);
    const admitted = msUntilOne(requests) === 0 && (!tokens || msUntilOne(tokens) === 0);
    if (admitted) requests.level -= 1;
    return admissionOf(admitted, requests, tokens);
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
