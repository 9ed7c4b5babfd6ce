// Requests and tokens per minute per key in Redis, for several gw instances that share their keys'
// limits (issue 23). The buckets refill continuously as in one process (gateway/auth/rate-limiter.ts,
// the same maths): an admit is one Lua script on Redis's clock (TIME), so instances with skewed
// clocks still agree, and a take can never be lost between two instances.
//
// Keys (P = prefix, "gw:" by default), sharing the key's hash tag:
//   P rate:{k:<key>}:requests, P rate:{k:<key>}:tokens   hash  capacity, level, at (ms, Redis's clock)
// Each expires BUCKET_IDLE_MS after it would be full again: a bucket that is gone is a full one.
import type { Redis, Result } from "ioredis";
import { type Admission, admissionOf, type RateLimitBuckets } from "./rate-buckets.js";

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

const LUA_BUCKETS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local idleMs = tonumber(ARGV[#ARGV])
local function fmt(n) return string.format('%.17g', n) end
-- The bucket's level now at this capacity: a new one is full; a changed limit applies at once and
-- the level never exceeds it.
local function levelOf(key, capacity)
  local state = redis.call('HMGET', key, 'level', 'at')
  if not state[1] then return capacity end
  local elapsed = math.max(0, now - tonumber(state[2]))
  return math.min(capacity, tonumber(state[1]) + elapsed * capacity / 60000)
end
local function save(key, capacity, level)
  redis.call('HSET', key, 'capacity', fmt(capacity), 'level', fmt(level), 'at', fmt(now))
  local untilFull = math.max(0, (capacity - level) * 60000 / capacity)
  redis.call('PEXPIRE', key, string.format('%d', math.ceil(untilFull + idleMs)))
end
`;

// KEYS requests bucket, tokens bucket. ARGV requests per minute, tokens per minute ('' none), idle ms.
// Returns 1 when admitted (one request taken) else 0, and the levels after it (the tokens' '' when none).
const ADMIT = `${LUA_BUCKETS}
local requestsPerMinute, tokensPerMinute = tonumber(ARGV[1]), tonumber(ARGV[2])
local requests = levelOf(KEYS[1], requestsPerMinute)
local tokens = tokensPerMinute and levelOf(KEYS[2], tokensPerMinute)
local admitted = requests >= 1 and (not tokens or tokens >= 1)
if admitted then requests = requests - 1 end
save(KEYS[1], requestsPerMinute, requests)
if tokens then save(KEYS[2], tokensPerMinute, tokens) end
return { admitted and 1 or 0, fmt(requests), tokens and fmt(tokens) or '' }
`;

// KEYS tokens bucket. ARGV tokens, idle ms. Only an existing bucket (the key has a token limit) counts them; it may go below zero.
const SPEND = `${LUA_BUCKETS}
local capacity = tonumber(redis.call('HGET', KEYS[1], 'capacity'))
if not capacity then return 0 end
save(KEYS[1], capacity, levelOf(KEYS[1], capacity) - tonumber(ARGV[1]))
return 1
`;

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
    checkRate("requestsPerMinute", requestsPerMinute);
    if (tokensPerMinute !== undefined) checkRate("tokensPerMinute", tokensPerMinute);
    const reply = await this.redis.gwRateAdmit(
      this.bucketKey(key, "requests"),
      this.bucketKey(key, "tokens"),
      String(requestsPerMinute),
      tokensPerMinute === undefined ? "" : String(tokensPerMinute),
      BUCKET_IDLE_MS,
    );
    if (!Array.isArray(reply) || reply.length !== 3) throw new Error(`unexpected reply from the rate limit script: ${String(reply)}`);
    const [admitted, requestsLevel, tokensLevel] = reply as [unknown, unknown, unknown];
    const requests = { capacity: requestsPerMinute, level: Number(requestsLevel) };
    const tokens = tokensPerMinute === undefined ? undefined : { capacity: tokensPerMinute, level: Number(tokensLevel) };
    return admissionOf(admitted === 1, requests, tokens);
  }

  spendTokens(key: string, tokens: number): void {
    if (!Number.isFinite(tokens) || tokens <= 0) return;
    this.redis.gwRateSpend(this.bucketKey(key, "tokens"), String(tokens), BUCKET_IDLE_MS).catch((error: unknown) => this.onError(error));
  }

  private bucketKey(key: string, bucket: "requests" | "tokens"): string {
    return `${this.prefix}rate:{k:${key}}:${bucket}`;
  }
}

function checkRate(name: string, perMinute: number): void {
  if (!Number.isFinite(perMinute) || perMinute <= 0) throw new RangeError(`${name} must be a number above 0, not ${perMinute}`);
}
