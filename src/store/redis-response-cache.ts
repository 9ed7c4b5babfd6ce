// The response cache in Redis (docs/decisions.md §22), shared by every gw instance on it: an
// answer cached through one is replayed by all, and the bound in bytes holds over all of them.
// Redis runs with maxmemory-policy noeviction (docs/deploy.md): the bound is ours to keep. It
// counts the values' bytes; the bookkeeping below adds a few hundred bytes per entry beside them.
//
// Keys (P = prefix, "gw:" by default; an entry's member is `<agent id>/<hash>`):
//   P cache:entry:<member>  string  the value, with the entry's lifetime as its expiry (PX)
//   P cache:lru             zset    member -> its last use, from P cache:clock (least recently used first)
//   P cache:clock           string  a counter every put and hit takes the next number of: uses in the
//                                   same millisecond still have an order
//   P cache:expires         zset    member -> the instant its lifetime ends (ms, Redis's clock)
//   P cache:sizes           hash    member -> the value's bytes
//   P cache:usage           hash    "*" -> the bytes of every entry; <agent id> -> that agent's
//   P cache:agent:<agent>   set     the agent's hashes
// get and put are one Lua script each (EVALSHA through defineCommand), so the bookkeeping moves
// with the value. An entry whose lifetime ended is still counted until something removes it: a
// get of it, the sweep of lapsed entries each put does (a batch at a time), or totals(), which
// sweeps them all before it counts, so it reports live entries only. The scripts build the keys
// of the entries they remove: one Redis (or a primary with replicas), not Redis Cluster.
import type { Redis, Result } from "ioredis";
import { CACHE_AGENT_ID, type CacheTotals, checkCachePut, isCacheEntry, type ResponseCacheStore } from "./response-cache.js";

type ScriptArgument = string | number | Buffer;

declare module "ioredis" {
  interface RedisCommander<Context> {
    gwCacheGetBuffer(...args: ScriptArgument[]): Result<Buffer | null, Context>;
    gwCachePut(...args: ScriptArgument[]): Result<unknown, Context>;
    gwCacheTotals(...args: ScriptArgument[]): Result<unknown, Context>;
    gwCacheClear(...args: ScriptArgument[]): Result<unknown, Context>;
  }
}

/** How many lapsed entries a put sweeps, and how many entries one totals or clear step removes: never a long script. */
const PUT_SWEEP = 100;
const BATCH = 500;

// Every script: KEYS lru, expires, sizes, usage (then its own); ARGV[1] the prefix (then its own).
const LUA_COMMON = `
local lru, expires, sizes, usage = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local prefix = ARGV[1]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- Remove an entry and its bookkeeping; its bytes, or false when it was not counted.
local function forget(member)
  local agent, hash = string.match(member, '^([^/]+)/(.+)$')
  local size = redis.call('HGET', sizes, member)
  redis.call('DEL', prefix .. 'cache:entry:' .. member)
  redis.call('ZREM', lru, member)
  redis.call('ZREM', expires, member)
  redis.call('HDEL', sizes, member)
  redis.call('SREM', prefix .. 'cache:agent:' .. agent, hash)
  if not size then return false end
  size = tonumber(size)
  for _, field in ipairs({ '*', agent }) do
    if redis.call('HINCRBY', usage, field, -size) <= 0 then redis.call('HDEL', usage, field) end
  end
  return size
end
-- Remove up to limit entries whose lifetime ended; whether there may be more.
local function sweep(now, limit)
  local lapsed = redis.call('ZRANGEBYSCORE', expires, '-inf', string.format('%d', now), 'LIMIT', 0, limit)
  for _, member in ipairs(lapsed) do forget(member) end
  return #lapsed == limit
end
`;

// KEYS: common, clock, entry. ARGV: prefix, member. The value, or nil (and the entry forgotten when it lapsed).
const GET = `${LUA_COMMON}
local value = redis.call('GET', KEYS[6])
local expiry = redis.call('ZSCORE', expires, ARGV[2])
if value and expiry and tonumber(expiry) > now_ms() then
  redis.call('ZADD', lru, string.format('%d', redis.call('INCR', KEYS[5])), ARGV[2])
  return value
end
if value or expiry then forget(ARGV[2]) end
return false
`;

// KEYS: common, clock, entry, the agent's set. ARGV: prefix, member, agent, hash, value, ttl (ms),
// bound (bytes), sweep batch. 1 when stored, 0 when the value alone is over the bound.
const PUT = `${LUA_COMMON}
local member, agent, value = ARGV[2], ARGV[3], ARGV[5]
local ttl, bound = tonumber(ARGV[6]), tonumber(ARGV[7])
local now = now_ms()
sweep(now, tonumber(ARGV[8]))
local size = string.len(value)
if size > bound then return 0 end
forget(member)
redis.call('SET', KEYS[6], value, 'PX', ARGV[6])
redis.call('ZADD', lru, string.format('%d', redis.call('INCR', KEYS[5])), member)
redis.call('ZADD', expires, string.format('%d', now + ttl), member)
redis.call('HSET', sizes, member, size)
redis.call('SADD', KEYS[7], ARGV[4])
redis.call('HINCRBY', usage, agent, size)
local total = redis.call('HINCRBY', usage, '*', size)
while total > bound do
  local oldest = redis.call('ZRANGE', lru, 0, 0)[1]
  if not oldest or oldest == member then break end
  forget(oldest)
  total = tonumber(redis.call('HGET', usage, '*') or '0')
end
return 1
`;

// KEYS: common. ARGV: prefix, batch, agent ("" for every agent). {entries, bytes} of the live
// entries, or {-1, 0} when a batch of lapsed ones was swept and there may be more.
const TOTALS = `${LUA_COMMON}
if sweep(now_ms(), tonumber(ARGV[2])) then return {-1, 0} end
if ARGV[3] == '' then return {redis.call('ZCARD', lru), tonumber(redis.call('HGET', usage, '*') or '0')} end
return {redis.call('SCARD', prefix .. 'cache:agent:' .. ARGV[3]), tonumber(redis.call('HGET', usage, ARGV[3]) or '0')}
`;

// KEYS: common. ARGV: prefix, batch, agent ("" for every agent). Removes a batch of entries:
// {live entries removed, their bytes, 1 when there may be more}. Lapsed ones go uncounted.
const CLEAR = `${LUA_COMMON}
local limit, agent = tonumber(ARGV[2]), ARGV[3]
local members
if agent == '' then
  members = redis.call('ZRANGE', lru, 0, limit - 1)
else
  members = redis.call('SRANDMEMBER', prefix .. 'cache:agent:' .. agent, limit)
  for index, hash in ipairs(members) do members[index] = agent .. '/' .. hash end
end
local now, entries, bytes = now_ms(), 0, 0
for _, member in ipairs(members) do
  local expiry = redis.call('ZSCORE', expires, member)
  local size = forget(member)
  if size and expiry and tonumber(expiry) > now then
    entries = entries + 1
    bytes = bytes + size
  end
end
return {entries, bytes, #members == limit and 1 or 0}
`;

export class RedisResponseCache implements ResponseCacheStore {
  private readonly commonKeys: [lru: string, expires: string, sizes: string, usage: string];
  private readonly clockKey: string;

  constructor(
    private readonly redis: Redis,
    /** Prepended to every key, so several deployments (or tests) can share one Redis. */
    private readonly prefix = "gw:",
  ) {
    this.commonKeys = [`${prefix}cache:lru`, `${prefix}cache:expires`, `${prefix}cache:sizes`, `${prefix}cache:usage`];
    this.clockKey = `${prefix}cache:clock`;
    redis.defineCommand("gwCacheGet", { numberOfKeys: 6, lua: GET });
    redis.defineCommand("gwCachePut", { numberOfKeys: 7, lua: PUT });
    redis.defineCommand("gwCacheTotals", { numberOfKeys: 4, lua: TOTALS });
    redis.defineCommand("gwCacheClear", { numberOfKeys: 4, lua: CLEAR });
  }

  async get(agentId: string, hash: string): Promise<Buffer | undefined> {
    if (!isCacheEntry(agentId, hash)) return undefined;
    const member = `${agentId}/${hash}`;
    const value = await this.redis.gwCacheGetBuffer(...this.commonKeys, this.clockKey, this.entryKey(member), this.prefix, member);
    return value ?? undefined;
  }

  async put(agentId: string, hash: string, value: Buffer, ttlMs: number, maxBytes: number): Promise<void> {
    checkCachePut(agentId, hash, ttlMs, maxBytes);
    // Not sent at all when it could not be kept (the script checks again).
    if (value.length > maxBytes) return;
    const member = `${agentId}/${hash}`;
    await this.redis.gwCachePut(
      ...this.commonKeys,
      this.clockKey,
      this.entryKey(member),
      this.agentKey(agentId),
      this.prefix,
      member,
      agentId,
      hash,
      value,
      ttlMs,
      maxBytes,
      PUT_SWEEP,
    );
  }

  async totals(agentId?: string): Promise<CacheTotals> {
    if (agentId !== undefined && !CACHE_AGENT_ID.test(agentId)) return { entries: 0, bytes: 0 };
    for (;;) {
      const [entries = 0, bytes = 0] = numbers(await this.redis.gwCacheTotals(...this.commonKeys, this.prefix, BATCH, agentId ?? ""), 2);
      if (entries >= 0) return { entries, bytes };
    }
  }

  async clear(agentId?: string): Promise<CacheTotals> {
    if (agentId !== undefined && !CACHE_AGENT_ID.test(agentId)) throw new Error(`not a response cache agent: ${JSON.stringify(agentId)}`);
    const removed = { entries: 0, bytes: 0 };
    for (;;) {
      const [entries = 0, bytes = 0, more = 0] = numbers(await this.redis.gwCacheClear(...this.commonKeys, this.prefix, BATCH, agentId ?? ""), 3);
      removed.entries += entries;
      removed.bytes += bytes;
      if (more === 0) return removed;
    }
  }

  /** The connection is the state's, closed with it. */
  async close(): Promise<void> {}

  private entryKey(member: string): string {
    return `${this.prefix}cache:entry:${member}`;
  }

  private agentKey(agentId: string): string {
    return `${this.prefix}cache:agent:${agentId}`;
  }
}

/** A script's reply of `count` integers. */
function numbers(reply: unknown, count: number): number[] {
  if (!(Array.isArray(reply) && reply.length === count && reply.every((item) => typeof item === "number")))
    throw new Error(`unexpected reply from a response cache script: ${JSON.stringify(reply)}`);
  return reply;
}
