// Requests per minute per key: a token bucket that refills continuously.
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; updatedAt: number }>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Take one request from the key's bucket; returns 0 when allowed, else seconds to wait. */
  take(keyId: string, perMinute: number): number {
    const now = this.now();
    const ratePerMs = perMinute / 60_000;
    const bucket = this.buckets.get(keyId) ?? { tokens: perMinute, updatedAt: now };
    bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.updatedAt) * ratePerMs);
    bucket.updatedAt = now;
    this.buckets.set(keyId, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerMs / 1000));
  }
}
