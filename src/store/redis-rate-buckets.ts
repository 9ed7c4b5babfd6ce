// Requests and tokens per minute per key in Redis, for several gw instances that share their keys'
// limits (issue 23). The buckets refill continuously as in one process (gateway/auth/rate-limiter.ts,
// the same maths): an admit is one Lua script on Redis's clock (TIME), so instances with skewed
// clocks still agree, and a take can never be lost between two instances. A metered call's take
// runs inside its credit hold's script instead (LUA_RATE_TAKE, redis-credit-store.ts).
//
// Keys (P = prefix, "gw:" by default), sharing the key's hash tag:
//   P rate:{k:<key>}:requests, P rate:{k:<key>}:tokens   hash  capacity, level, at (ms, Redis's clock)
// Each expires BUCKET_IDLE_MS after it would be full again: a bucket that is gone is a full one.
import type { Redis, Result } from "ioredis";
import { type Admission, admissionOf, type RateLimitBuckets, type RateTake } from "./rate-buckets.js";

declare module "ioredis" {
  interface RedisCommander<Context> {
    gwRateAdmit(requestsKey: string, tokensKey: string, requestsPerMinute: string, tokensPerMinute: string, idleMs: number): Result<unknown, Context>;
    gwRateSpend(tokensKey: string, tokens: string, idleMs: number): Result<unknown, Context>;
  }
}

export interface RedisRateBucketsOptions {
  /** Prepended to every key, so several deployments (or tests) can share one Redis. */
  prefix?: string;
  /** Told when counting spent tokens fails (the server's log): the call that spent them has already been answered. */
  onError?: (error: unknown) => void;
}

/**
 * How long a full bucket is kept. Not needed for the maths (a missing bucket is a full one), but a
 * call's tokens are counted when it ends, and a token bucket that vanished meanwhile would not count
 * them: an hour is longer than any call lasts (the upstream total timeout is minutes).
 */
const BUCKET_IDLE_MS = 3_600_000;

/**
 * Lua: the buckets' maths on Redis's clock, and `takeRequest(requestsKey, tokensKey, requests per
 * minute, tokens per minute or nil, idle ms)`, which takes one request unless a bucket refuses and
 * returns { 1 or 0, the requests' level, the tokens' level or '' }. The admit script here runs it
 * alone; a credit hold that counts its request in the same step (redis-credit-store.ts) runs it first.
 */
export const LUA_RATE_TAKE = `
local function bucketNow()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local function fmt(n) return string.format('%.17g', n) end
-- The bucket's level now at this capacity: a new one is full; a changed limit applies at once and
-- the level never exceeds it.
local function levelOf(key, capacity, now)
  local state = redis.call('HMGET', key, 'level', 'at')
  if not state[1] then return capacity end
  local elapsed = math.max(0, now - tonumber(state[2]))
  return math.min(capacity, tonumber(state[1]) + elapsed * capacity / 60000)
end
local function save(key, capacity, level, now, idleMs)
  redis.call('HSET', key, 'capacity', fmt(capacity), 'level', fmt(level), 'at', fmt(now))
  local untilFull = math.max(0, (capacity - level) * 60000 / capacity)
  redis.call('PEXPIRE', key, string.format('%d', math.ceil(untilFull + idleMs)))
end
local function takeRequest(requestsKey, tokensKey, requestsPerMinute, tokensPerMinute, idleMs)
  local now = bucketNow()
  local requests = levelOf(requestsKey, requestsPerMinute, now)
  local tokens = tokensPerMinute and levelOf(tokensKey, tokensPerMinute, now)
  local admitted = requests >= 1 and (not tokens or tokens >= 1)
  if admitted then requests = requests - 1 end
  save(requestsKey, requestsPerMinute, requests, now, idleMs)
  if tokens then save(tokensKey, tokensPerMinute, tokens, now, idleMs) end
  return { admitted and 1 or 0, fmt(requests), tokens and fmt(tokens) or '' }
end
`;

// KEYS requests bucket, tokens bucket. ARGV requests per minute, tokens per minute ('' none), idle ms.
const ADMIT = `${LUA_RATE_TAKE}
return takeRequest(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
`;

// KEYS tokens bucket. ARGV tokens, idle ms. Only an existing bucket (the key has a token limit) counts them; it may go below zero.
const SPEND = `${LUA_RATE_TAKE}
local capacity = tonumber(redis.call('HGET', KEYS[1], 'capacity'))
if not capacity then return 0 end
local now = bucketNow()
save(KEYS[1], capacity, levelOf(KEYS[1], capacity, now) - tonumber(ARGV[1]), now, tonumber(ARGV[2]))
return 1
`;

/** The Redis keys of a rate key's two buckets. */
export function rateBucketKeys(prefix: string, key: string): { requests: string; tokens: string } {
  return { requests: `${prefix}rate:{k:${key}}:requests`, tokens: `${prefix}rate:{k:${key}}:tokens` };
}

/** `takeRequest`'s arguments after its two keys: the limits (checked) and how long an idle bucket is kept. */
export function rateTakeArguments(take: RateTake): [string, string, number] {
  checkRate("requestsPerMinute", take.requestsPerMinute);
  if (take.tokensPerMinute !== undefined) checkRate("tokensPerMinute", take.tokensPerMinute);
  return [String(take.requestsPerMinute), take.tokensPerMinute === undefined ? "" : String(take.tokensPerMinute), BUCKET_IDLE_MS];
}

/** The admission a take's reply (admitted, requests level, tokens level) stands for. */
export function admissionOfReply(reply: readonly unknown[], take: RateTake): Admission {
  const [admitted, requestsLevel, tokensLevel] = reply;
  const requests = { capacity: take.requestsPerMinute, level: Number(requestsLevel) };
  const tokens = take.tokensPerMinute === undefined ? undefined : { capacity: take.tokensPerMinute, level: Number(tokensLevel) };
  return admissionOf(admitted === 1 || admitted === "1", requests, tokens);
}

export class RedisRateBuckets implements RateLimitBuckets {
  private readonly prefix: string;
  private readonly onError: (error: unknown) => void;

  constructor(
    private readonly redis: Redis,
    options: RedisRateBucketsOptions = {},
  ) {
    this.prefix = options.prefix ?? "gw:";
    this.onError = options.onError ?? ((error) => process.emitWarning(`counting spent tokens in Redis failed: ${String(error)}`));
    redis.defineCommand("gwRateAdmit", { numberOfKeys: 2, lua: ADMIT });
    redis.defineCommand("gwRateSpend", { numberOfKeys: 1, lua: SPEND });
  }

  async admit(key: string, requestsPerMinute: number, tokensPerMinute?: number): Promise<Admission> {
    const take = { key, requestsPerMinute, tokensPerMinute };
    const buckets = rateBucketKeys(this.prefix, key);
    const reply = await this.redis.gwRateAdmit(buckets.requests, buckets.tokens, ...rateTakeArguments(take));
    if (!Array.isArray(reply) || reply.length !== 3) throw new Error(`unexpected reply from the rate limit script: ${String(reply)}`);
    return admissionOfReply(reply, take);
  }

  spendTokens(key: string, tokens: number): void {
    if (!Number.isFinite(tokens) || tokens <= 0) return;
    this.redis.gwRateSpend(rateBucketKeys(this.prefix, key).tokens, String(tokens), BUCKET_IDLE_MS).catch((error: unknown) => this.onError(error));
  }
}

function checkRate(name: string, perMinute: number): void {
  if (!Number.isFinite(perMinute) || perMinute <= 0) throw new RangeError(`${name} must be a number above 0, not ${perMinute}`);
}
