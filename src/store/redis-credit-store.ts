// Credit balances, holds and usage rows in Redis, for several gw instances that spend the same
// agents' credits (issue 23). Every step is one Lua script (EVALSHA through defineCommand, which
// loads it again after a Redis restart), so check-then-hold is atomic across instances.
//
// Keys (P = prefix, "gw:" by default). An agent's counters share its hash tag {a:<agentId>}:
//   P{a:A}:spent:<YYYY-MM>  hash  plan -> credits billed to A; k:<keyPrefix> -> billed to that key
//   P{a:A}:spent:life       hash  k:<keyPrefix> -> credits billed to that key in every month
//   P{a:A}:held             hash  plan -> credits A holds now; k:<keyPrefix> -> held against that key
//   P{a:A}:holds            hash  hold id -> {"a": amount, "k"?: keyPrefix, "n"?: kept name}
//   P{a:A}:leases           zset  hold id -> lease deadline (ms, Redis's clock); kept holds have none
//   P kept                  hash  name -> the kept CreditHold as JSON
//   P usage-id:<rowId>      string  the row's period, for ~70 days: settle writes a row id once
//   P usage:<YYYY-MM>       stream  one entry per row, field r = the row's JSON (append-only)
// A hold that takes its request's rate in the same step also writes the key's rate buckets
// (redis-rate-buckets.ts).
// The last three are not under an agent's tag, so this needs one Redis (or a primary with
// replicas), not Redis Cluster.
//
// A hold is leased: the store that made it renews its lease while it is open, so a live hold never
// expires; when an instance dies its holds expire after `leaseMs`, and the next hold or balance of
// the agent returns their credits, once.
import { randomUUID } from "node:crypto";
import type { Redis, Result } from "ioredis";
import type { CreditAccount, CreditBalance, CreditHold, CreditStore, HoldOutcome } from "./credit-store.js";
import type { Admission, RateTake } from "./rate-buckets.js";
import { admissionOfReply, LUA_RATE_TAKE, rateBucketKeys, rateTakeArguments } from "./redis-rate-buckets.js";
import { StoreError } from "./store-error.js";
import { rowProblem, type UsageRow } from "./usage-log.js";

type ScriptArgument = string | number;

declare module "ioredis" {
  interface RedisCommander<Context> {
    gwCreditHold(...args: ScriptArgument[]): Result<unknown, Context>;
    gwCreditHoldTaking(...args: ScriptArgument[]): Result<unknown, Context>;
    gwCreditSettle(...args: ScriptArgument[]): Result<unknown, Context>;
    gwCreditRelease(...args: ScriptArgument[]): Result<unknown, Context>;
    gwCreditKeep(...args: ScriptArgument[]): Result<unknown, Context>;
    gwCreditKeepUnchecked(...args: ScriptArgument[]): Result<unknown, Context>;
    gwCreditBalance(...args: ScriptArgument[]): Result<unknown, Context>;
    gwCreditRenew(...args: ScriptArgument[]): Result<unknown, Context>;
  }
}

export interface RedisCreditStoreOptions {
  /** Prepended to every key, so several deployments (or tests) can share one Redis. */
  prefix?: string;
  /** How long a hold outlives the last renewal of its lease (the instance that made it died). */
  leaseMs?: number;
  /** How often this store renews the leases of its open holds; well under `leaseMs`. */
  renewEveryMs?: number;
  /** Told when renewing leases fails (the server's log); renewal is tried again next time. */
  onError?: (error: unknown) => void;
}

/** How many expired holds one script returns: a backlog is returned over several calls, never in one long script. */
const SWEEP_LIMIT = 64;
/** A row id is remembered this long: longer than the two months `hasRow` is asked about, and any retry of a settle. */
const ROW_ID_TTL_SECONDS = 70 * 24 * 3600;

// Lua numbers are doubles: credits are whole and below 2^53, and go to Redis through int() because
// redis.call would print a large number as "1e+15", which HINCRBY refuses.
const LUA_COMMON = `
local function int(n) return string.format('%d', n) end
local function num(value) return tonumber(value) or 0 end
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function addHeld(held, field, amount)
  if redis.call('HINCRBY', held, field, int(amount)) == 0 then redis.call('HDEL', held, field) end
end
-- Return a hold's credits and forget it; false when it is not held (released, settled or expired).
local function unhold(held, holds, kept, id)
  local value = redis.call('HGET', holds, id)
  if not value then return false end
  redis.call('HDEL', holds, id)
  local hold = cjson.decode(value)
  local amount = tonumber(hold.a)
  addHeld(held, 'plan', -amount)
  if hold.k then addHeld(held, 'k:' .. hold.k, -amount) end
  if hold.n and kept then redis.call('HDEL', kept, hold.n) end
  return true
end
-- The holds whose instance stopped renewing them: their credits come back.
local function sweep(held, holds, leases, now)
  local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now, 'LIMIT', 0, ${SWEEP_LIMIT})
  for _, id in ipairs(expired) do
    redis.call('ZREM', leases, id)
    unhold(held, holds, false, id)
  end
end
`;

/** KEYS month, life, held, holds, leases. ARGV keyPrefix, budget period ('' without a budget): used and held, after a sweep. */
const LUA_BALANCE_PART = `
local function balanceOf(month, life, held, keyPrefix, budgetPeriod)
  local b = { planUsed = num(redis.call('HGET', month, 'plan')), planHeld = num(redis.call('HGET', held, 'plan')), keySpent = 0, keyHeld = 0 }
  if budgetPeriod ~= '' then
    b.keySpent = num(redis.call('HGET', budgetPeriod == 'total' and life or month, 'k:' .. keyPrefix))
    b.keyHeld = num(redis.call('HGET', held, 'k:' .. keyPrefix))
  end
  return b
end
`;

// KEYS month, life, held, holds, leases. ARGV id, want, atLeast, allowance, keyPrefix, budget credits, budget period, leaseMs.
const LUA_HOLD_PART = `
local function holdCredits()
  local now = nowMs()
  sweep(KEYS[3], KEYS[4], KEYS[5], now)
  local keyPrefix, budgetPeriod = ARGV[5], ARGV[7]
  local b = balanceOf(KEYS[1], KEYS[2], KEYS[3], keyPrefix, budgetPeriod)
  local credits, limit = tonumber(ARGV[4]) - b.planUsed - b.planHeld, 'plan'
  if budgetPeriod ~= '' then
    local key = tonumber(ARGV[6]) - b.keySpent - b.keyHeld
    if key < credits then credits, limit = key, 'key' end
  end
  local amount = math.min(tonumber(ARGV[2]), credits)
  if credits <= 0 or amount < tonumber(ARGV[3]) then return { 'spendable', int(credits), limit } end
  local hold = { a = int(amount) }
  addHeld(KEYS[3], 'plan', amount)
  if budgetPeriod ~= '' then
    hold.k = keyPrefix
    addHeld(KEYS[3], 'k:' .. keyPrefix, amount)
  end
  redis.call('HSET', KEYS[4], ARGV[1], cjson.encode(hold))
  redis.call('ZADD', KEYS[5], int(now + tonumber(ARGV[8])), ARGV[1])
  return { 'held', int(amount), '' }
end
`;
const HOLD = `${LUA_COMMON}${LUA_BALANCE_PART}${LUA_HOLD_PART}
return holdCredits()
`;
// HOLD's keys and arguments, then KEYS requests bucket, tokens bucket; ARGV requests per minute,
// tokens per minute ('' none), idle ms. The request is taken first (it counts even when no credits
// are held, as a request refused with 402 does); a refused take holds nothing. Returns HOLD's reply
// ('refused' when the take was) and the take's reply after it.
const HOLD_TAKING = `${LUA_COMMON}${LUA_BALANCE_PART}${LUA_HOLD_PART}${LUA_RATE_TAKE}
local take = takeRequest(KEYS[6], KEYS[7], tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]))
local outcome = take[1] == 1 and holdCredits() or { 'refused', '0', '' }
return { outcome[1], outcome[2], outcome[3], tostring(take[1]), take[2], take[3] }
`;

// KEYS row id, stream, month, life (the row's agent), held, holds, leases (the hold's agent), kept.
// ARGV hold id ('' none), period, row id TTL, row JSON, credits, '1' when the row has a key, keyPrefix.
// The hold is released even for a row written before; a hold whose lease expired is gone, and its row still bills.
const SETTLE = `${LUA_COMMON}
if ARGV[1] ~= '' then
  redis.call('ZREM', KEYS[7], ARGV[1])
  unhold(KEYS[5], KEYS[6], KEYS[8], ARGV[1])
end
if not redis.call('SET', KEYS[1], ARGV[2], 'NX', 'EX', ARGV[3]) then return 0 end
redis.call('HINCRBY', KEYS[3], 'plan', ARGV[5])
if ARGV[6] == '1' then
  redis.call('HINCRBY', KEYS[3], 'k:' .. ARGV[7], ARGV[5])
  redis.call('HINCRBY', KEYS[4], 'k:' .. ARGV[7], ARGV[5])
end
redis.call('XADD', KEYS[2], '*', 'r', ARGV[4])
return 1
`;

// KEYS held, holds, leases, kept. ARGV hold id.
const RELEASE = `${LUA_COMMON}
redis.call('ZREM', KEYS[3], ARGV[1])
return unhold(KEYS[1], KEYS[2], KEYS[4], ARGV[1]) and 1 or 0
`;

// KEYS held, holds, leases, kept. ARGV name, hold id, the kept hold's JSON.
// A hold no longer held (released, settled, or expired) keeps nothing, as in one process.
const KEEP = `${LUA_COMMON}
local existing = redis.call('HGET', KEYS[4], ARGV[1])
if existing then
  if cjson.decode(existing).id == ARGV[2] then return 1 end
  return redis.error_reply('ERR credit hold name ' .. ARGV[1] .. ' already keeps another hold')
end
local value = redis.call('HGET', KEYS[2], ARGV[2])
if not value then return 0 end
local hold = cjson.decode(value)
if hold.n then redis.call('HDEL', KEYS[4], hold.n) end
hold.n = ARGV[1]
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], cjson.encode(hold))
redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
return 1
`;

// KEYS held, holds, kept. ARGV name, hold id, the kept hold's JSON, amount, keyPrefix ('' none).
// Returns the JSON of the hold kept under the name, the existing one when there is one.
const KEEP_UNCHECKED = `${LUA_COMMON}
local existing = redis.call('HGET', KEYS[3], ARGV[1])
if existing then return existing end
local hold = { a = ARGV[4], n = ARGV[1] }
addHeld(KEYS[1], 'plan', tonumber(ARGV[4]))
if ARGV[5] ~= '' then
  hold.k = ARGV[5]
  addHeld(KEYS[1], 'k:' .. ARGV[5], tonumber(ARGV[4]))
end
redis.call('HSET', KEYS[2], ARGV[2], cjson.encode(hold))
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
return ARGV[3]
`;

// KEYS month, life, held, holds, leases. ARGV keyPrefix, budget period ('' without a budget).
const BALANCE = `${LUA_COMMON}${LUA_BALANCE_PART}
sweep(KEYS[3], KEYS[4], KEYS[5], nowMs())
local b = balanceOf(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2])
return { int(b.planUsed), int(b.planHeld), int(b.keySpent), int(b.keyHeld) }
`;

// KEYS leases. ARGV leaseMs, hold ids. Returns the ids no longer leased (settled, released, kept or
// expired and returned): only a hold still leased is renewed, so a returned hold never comes back.
const RENEW = `${LUA_COMMON}
local deadline = int(nowMs() + tonumber(ARGV[1]))
local gone = {}
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then redis.call('ZADD', KEYS[1], 'XX', deadline, ARGV[i]) else gone[#gone + 1] = ARGV[i] end
end
return gone
`;

export class RedisCreditStore implements CreditStore {
  private readonly prefix: string;
  private readonly leaseMs: number;
  private readonly onError: (error: unknown) => void;
  /** Leased holds this store made and renews: hold id -> agent id. */
  private readonly leased = new Map<string, string>();
  private readonly renewTimer: NodeJS.Timeout;
  private renewing = false;

  constructor(
    private readonly redis: Redis,
    options: RedisCreditStoreOptions = {},
  ) {
    const { prefix = "gw:", leaseMs = 30_000, renewEveryMs = 10_000 } = options;
    if (!(Number.isSafeInteger(leaseMs) && leaseMs > 0 && renewEveryMs > 0 && renewEveryMs < leaseMs))
      throw new RangeError(`leaseMs (${leaseMs}) must be a whole number of ms above renewEveryMs (${renewEveryMs})`);
    this.prefix = prefix;
    this.leaseMs = leaseMs;
    this.onError = options.onError ?? ((error) => process.emitWarning(`renewing credit hold leases in Redis failed: ${String(error)}`));
    redis.defineCommand("gwCreditHold", { numberOfKeys: 5, lua: HOLD });
    redis.defineCommand("gwCreditHoldTaking", { numberOfKeys: 7, lua: HOLD_TAKING });
    redis.defineCommand("gwCreditSettle", { numberOfKeys: 8, lua: SETTLE });
    redis.defineCommand("gwCreditRelease", { numberOfKeys: 4, lua: RELEASE });
    redis.defineCommand("gwCreditKeep", { numberOfKeys: 4, lua: KEEP });
    redis.defineCommand("gwCreditKeepUnchecked", { numberOfKeys: 3, lua: KEEP_UNCHECKED });
    redis.defineCommand("gwCreditBalance", { numberOfKeys: 5, lua: BALANCE });
    redis.defineCommand("gwCreditRenew", { numberOfKeys: 1, lua: RENEW });
    this.renewTimer = setInterval(() => void this.renewLeases(), renewEveryMs);
    this.renewTimer.unref();
  }

  async hold(account: CreditAccount, want: number, atLeast: number, period: string, take?: RateTake): Promise<HoldOutcome> {
    checkAccount(account);
    checkCount("want", want);
    checkCount("atLeast", atLeast);
    checkPeriod(period);
    const id = randomUUID();
    const keys = this.agentKeys(account.agentId);
    const key = account.key;
    const holdKeys = [keys.month(period), keys.life, keys.held, keys.holds, keys.leases];
    const holdArguments: ScriptArgument[] = [
      id,
      want,
      atLeast,
      account.allowance,
      key?.prefix ?? "",
      key?.budget.credits ?? 0,
      key?.budget.period ?? "",
      this.leaseMs,
    ];
    let reply: string[];
    let admission: Admission | undefined;
    if (take) {
      const buckets = rateBucketKeys(this.prefix, take.key);
      const taking = await this.redis.gwCreditHoldTaking(...holdKeys, buckets.requests, buckets.tokens, ...holdArguments, ...rateTakeArguments(take));
      reply = stringsOf(taking, "hold");
      admission = admissionOfReply(reply.slice(3), take);
    } else reply = stringsOf(await this.redis.gwCreditHold(...holdKeys, ...holdArguments), "hold");
    const [outcome, credits, limit] = reply;
    const taken = admission && { admission };
    if (outcome === "refused") return { ...taken };
    if (outcome === "held") {
      this.leased.set(id, account.agentId);
      return { held: { id, agentId: account.agentId, keyPrefix: key?.prefix, amount: Number(credits) }, ...taken };
    }
    return { spendable: { credits: Number(credits), limit: limit === "key" ? "key" : "plan" }, ...taken };
  }

  async settle(hold: CreditHold | null, row: UsageRow): Promise<void> {
    const problem = settleRowProblem(row);
    if (problem) throw new StoreError(`usage row ${JSON.stringify(row?.id) ?? "(missing)"} refused, nothing written: ${problem}`);
    const period = row.time.slice(0, 7);
    const rowKeys = this.agentKeys(row.agent);
    const holdKeys = this.agentKeys(hold?.agentId ?? row.agent);
    const hasKey = typeof row.keyPrefix === "string";
    await this.redis.gwCreditSettle(
      `${this.prefix}usage-id:${row.id}`,
      `${this.prefix}usage:${period}`,
      rowKeys.month(period),
      rowKeys.life,
      holdKeys.held,
      holdKeys.holds,
      holdKeys.leases,
      this.keptKey,
      hold?.id ?? "",
      period,
      ROW_ID_TTL_SECONDS,
      JSON.stringify(row),
      row.credits,
      hasKey ? "1" : "",
      hasKey ? row.keyPrefix : "",
    );
    if (hold) this.leased.delete(hold.id);
  }

  async release(hold: CreditHold): Promise<void> {
    const keys = this.agentKeys(hold.agentId);
    await this.redis.gwCreditRelease(keys.held, keys.holds, keys.leases, this.keptKey, hold.id);
    this.leased.delete(hold.id);
  }

  async keep(name: string, hold: CreditHold): Promise<void> {
    checkName(name);
    const keys = this.agentKeys(hold.agentId);
    await this.redis.gwCreditKeep(keys.held, keys.holds, keys.leases, this.keptKey, name, hold.id, JSON.stringify(keptJson(hold)));
    this.leased.delete(hold.id);
  }

  async keepUnchecked(name: string, agentId: string, amount: number, keyPrefix?: string): Promise<CreditHold> {
    checkName(name);
    checkAgent(agentId);
    checkCount("amount", amount);
    const hold: CreditHold = { id: randomUUID(), agentId, keyPrefix, amount };
    const keys = this.agentKeys(agentId);
    const reply = await this.redis.gwCreditKeepUnchecked(
      keys.held,
      keys.holds,
      this.keptKey,
      name,
      hold.id,
      JSON.stringify(keptJson(hold)),
      amount,
      keyPrefix ?? "",
    );
    return parseKept(reply);
  }

  async kept(name: string): Promise<CreditHold | undefined> {
    const reply = await this.redis.hget(this.keptKey, name);
    return reply === null ? undefined : parseKept(reply);
  }

  async balance(account: CreditAccount, period: string): Promise<CreditBalance> {
    checkAccount(account);
    checkPeriod(period);
    const keys = this.agentKeys(account.agentId);
    const key = account.key;
    const reply = await this.redis.gwCreditBalance(
      keys.month(period),
      keys.life,
      keys.held,
      keys.holds,
      keys.leases,
      key?.prefix ?? "",
      key?.budget.period ?? "",
    );
    const counts = stringsOf(reply, "balance").map(Number);
    if (counts.length !== 4) throw new Error(`unexpected reply from the balance script: ${String(reply)}`);
    const [planUsed, planHeld, keySpent, keyHeld] = counts as [number, number, number, number];
    return { planUsed, planHeld, keySpent, keyHeld };
  }

  async hasRow(rowId: string, periods: readonly string[]): Promise<boolean> {
    const period = await this.redis.get(`${this.prefix}usage-id:${rowId}`);
    return period !== null && periods.includes(period);
  }

  /** Stop renewing leases. Holds still open are not released: they expire after `leaseMs`, as if this instance had died. */
  close(): void {
    clearInterval(this.renewTimer);
  }

  /** One pipelined script per agent; a renewal still running when the timer fires again is not doubled. */
  private async renewLeases(): Promise<void> {
    if (this.renewing || this.leased.size === 0) return;
    this.renewing = true;
    try {
      const byAgent = new Map<string, string[]>();
      for (const [id, agentId] of this.leased) {
        const ids = byAgent.get(agentId);
        if (ids) ids.push(id);
        else byAgent.set(agentId, [id]);
      }
      const pipeline = this.redis.pipeline();
      for (const [agentId, ids] of byAgent) pipeline.gwCreditRenew(this.agentKeys(agentId).leases, this.leaseMs, ...ids);
      for (const [error, reply] of (await pipeline.exec()) ?? []) {
        if (error) throw error;
        for (const id of stringsOf(reply, "renew")) this.leased.delete(id);
      }
    } catch (error) {
      this.onError(error);
    } finally {
      this.renewing = false;
    }
  }

  private get keptKey(): string {
    return `${this.prefix}kept`;
  }

  private agentKeys(agentId: string) {
    const base = `${this.prefix}{a:${agentId}}:`;
    return {
      month: (period: string) => `${base}spent:${period}`,
      life: `${base}spent:life`,
      held: `${base}held`,
      holds: `${base}holds`,
      leases: `${base}leases`,
    };
  }
}

function keptJson(hold: CreditHold): CreditHold {
  return { id: hold.id, agentId: hold.agentId, keyPrefix: hold.keyPrefix, amount: hold.amount };
}

function parseKept(reply: unknown): CreditHold {
  const value: unknown = typeof reply === "string" ? JSON.parse(reply) : undefined;
  if (typeof value !== "object" || value === null) throw new Error(`unexpected kept credit hold in Redis: ${String(reply)}`);
  const { id, agentId, keyPrefix, amount } = value as Record<string, unknown>;
  if (typeof id !== "string" || typeof agentId !== "string" || typeof amount !== "number" || (keyPrefix !== undefined && typeof keyPrefix !== "string"))
    throw new Error(`unexpected kept credit hold in Redis: ${String(reply)}`);
  return { id, agentId, keyPrefix, amount };
}

/** What UsageLog.append refuses, and a row id (the once-only guard is keyed by it). */
function settleRowProblem(row: UsageRow): string | null {
  const problem = rowProblem(row);
  if (problem) return problem;
  if (typeof row.id !== "string" || row.id === "") return `id ${JSON.stringify(row.id) ?? "(missing)"} is not a non-empty string`;
  if (typeof row.time !== "string" || !/^\d{4}-\d{2}/.test(row.time)) return `time ${JSON.stringify(row.time) ?? "(missing)"} does not start with YYYY-MM`;
  return null;
}

function stringsOf(reply: unknown, script: string): string[] {
  if (!Array.isArray(reply) || !reply.every((item) => typeof item === "string"))
    throw new Error(`unexpected reply from the ${script} script: ${String(reply)}`);
  return reply;
}

function checkCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a whole number of credits >= 0, not ${value}`);
}

function checkAgent(agentId: string): void {
  if (typeof agentId !== "string" || agentId === "") throw new RangeError("an agent id must be a non-empty string");
}

function checkAccount(account: CreditAccount): void {
  checkAgent(account.agentId);
  checkCount("allowance", account.allowance);
  if (account.key) {
    if (typeof account.key.prefix !== "string") throw new RangeError("a key prefix must be a string");
    checkCount("a key's budget", account.key.budget.credits);
  }
}

function checkName(name: string): void {
  if (typeof name !== "string" || name === "") throw new RangeError("a kept hold's name must be a non-empty string");
}

function checkPeriod(period: string): void {
  if (!/^\d{4}-\d{2}$/.test(period)) throw new RangeError(`period must be YYYY-MM, not ${period}`);
}
