// Batches in Redis (the shared BatchRecords, src/store/batch-records.ts), for several gw instances
// whose runners share the work: each batch is claimed by one instance at a time, so exactly one
// runs, records and bills its lines.
//
// Keys (P = prefix, "gw:" by default):
//   P batch:record:<id>    hash    `record`: the record's JSON without its line counts; `completed`, `failed`: the line counts
//   P batch:results:<id>   list    the results' JSON lines ({index, ok, line}), in the order recorded
//   P batch:recorded:<id>  set     the indexes of the lines recorded
//   P batch:active         zset    ids of the batches not ended, all score 0: lexical order = ULID = oldest first
//   P batch:agent:<agent>  zset    an agent's batch ids, all score 0 (listed newest first, `after` by ZREVRANGEBYLEX)
//   P batch:counts         hash    status -> how many batches are in it (the metrics)
//   P batch:claim:<id>     string  the claim's random token, with the lease as its TTL (SET NX PX)
// Create, update, addResult, renew and release are one Lua script each (EVALSHA through
// defineCommand): the indexes and counts move with the record, and the claim is checked in the
// same step that writes (fencing). The line counts sit beside the record's JSON, not in it, so
// that addResult counts with HINCRBY: decoding and encoding the record with Redis's cjson would
// turn an empty list into an object and refuse a lone surrogate in metadata. The keys are not
// under one hash tag: this needs one Redis (or a primary with replicas), not Redis Cluster.
import type { Redis, Result } from "ioredis";
import {
  applyBatchChange,
  BATCH_STATUSES,
  BatchClaimLostError,
  BatchEndedError,
  type BatchLineResult,
  type BatchRecord,
  type BatchRecords,
  type BatchStatus,
  ENDED_BATCH_STATUSES,
  isBatchId,
  type JobClaim,
} from "./batch-records.js";
import { defineLeaseCommands, RedisLease, takeLease } from "./redis-leases.js";
import { StoreError } from "./store-error.js";

type ScriptArgument = string | number;

declare module "ioredis" {
  interface RedisCommander<Context> {
    gwBatchCreate(...args: ScriptArgument[]): Result<unknown, Context>;
    gwBatchUpdate(...args: ScriptArgument[]): Result<unknown, Context>;
    gwBatchAddResult(...args: ScriptArgument[]): Result<unknown, Context>;
  }
}

// KEYS: record, active, agent, counts. ARGV: id, JSON, status, completed, failed, "1" when ended.
const CREATE = `
if redis.call('HSETNX', KEYS[1], 'record', ARGV[2]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'completed', ARGV[4], 'failed', ARGV[5])
if ARGV[6] ~= '1' then redis.call('ZADD', KEYS[2], 0, ARGV[1]) end
redis.call('ZADD', KEYS[3], 0, ARGV[1])
redis.call('HINCRBY', KEYS[4], ARGV[3], 1)
return 1
`;

// Compare-and-set of the record's JSON, checked against the claim in the same step.
// KEYS: record, active, counts, claim. ARGV: id, the JSON read, the new JSON, old status, new
// status, claim token ("" for an unclaimed change), "1" when the old status has ended, "1" when the
// new one has, the new completed and failed counts ("" to keep them).
// Returns "ok", "changed" (the record moved on since it was read: read again), "lost" (the claim is
// not held), "ended" (a claimed change to an ended batch) or "missing".
const UPDATE = `
local current = redis.call('HGET', KEYS[1], 'record')
if current == false then return 'missing' end
if ARGV[6] ~= '' then
  if redis.call('GET', KEYS[4]) ~= ARGV[6] then return 'lost' end
  if ARGV[7] == '1' and current == ARGV[2] then return 'ended' end
end
if current ~= ARGV[2] then return 'changed' end
redis.call('HSET', KEYS[1], 'record', ARGV[3])
if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'completed', ARGV[9], 'failed', ARGV[10]) end
if ARGV[4] ~= ARGV[5] then
  redis.call('HINCRBY', KEYS[3], ARGV[4], -1)
  redis.call('HINCRBY', KEYS[3], ARGV[5], 1)
end
if ARGV[8] == '1' then
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[2], 0, ARGV[1])
end
return 'ok'
`;

// A line's result, recorded once and counted, under the claim, to a batch not ended (one that is
// in the active index).
// KEYS: record, active, claim, recorded, results. ARGV: id, claim token, index, "completed" or
// "failed", the result's JSON. Returns "ok", "recorded" (before), "lost", "ended" or "missing".
const ADD_RESULT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
if redis.call('GET', KEYS[3]) ~= ARGV[2] then return 'lost' end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) == false then return 'ended' end
if redis.call('SADD', KEYS[4], ARGV[3]) == 0 then return 'recorded' end
redis.call('RPUSH', KEYS[5], ARGV[5])
redis.call('HINCRBY', KEYS[1], ARGV[4], 1)
return 'ok'
`;

/** How many times an update reads again when another writer changed the record in between. */
const UPDATE_ATTEMPTS = 20;
/** Results read per LRANGE. */
const RESULTS_CHUNK = 500;

/** The record's fields as kept in its hash. */
type StoredBatch = [record: string | null, completed: string | null, failed: string | null];

export class RedisBatchStore implements BatchRecords {
  private readonly activeKey: string;
  private readonly countsKey: string;

  constructor(
    private readonly redis: Redis,
    /** Prepended to every key, so several deployments (or tests) can share one Redis. */
    private readonly prefix = "gw:",
  ) {
    this.activeKey = `${prefix}batch:active`;
    this.countsKey = `${prefix}batch:counts`;
    redis.defineCommand("gwBatchCreate", { numberOfKeys: 4, lua: CREATE });
    redis.defineCommand("gwBatchUpdate", { numberOfKeys: 4, lua: UPDATE });
    redis.defineCommand("gwBatchAddResult", { numberOfKeys: 5, lua: ADD_RESULT });
    defineLeaseCommands(redis);
  }

  async create(batch: BatchRecord): Promise<void> {
    if (!isBatchId(batch.id)) throw new RangeError(`${batch.id} is not a batch id`);
    const created = await this.redis.gwBatchCreate(
      this.recordKey(batch.id),
      this.activeKey,
      this.agentKey(batch.agentId),
      this.countsKey,
      batch.id,
      storedJson(batch),
      batch.status,
      batch.requestCounts.completed,
      batch.requestCounts.failed,
      ENDED_BATCH_STATUSES.has(batch.status) ? "1" : "0",
    );
    if (created !== 1) throw new StoreError(`batch ${batch.id} is already in the store`);
  }

  async get(id: string): Promise<BatchRecord | undefined> {
    if (!isBatchId(id)) return undefined;
    return (await this.read([id]))[0]?.batch;
  }

  async list(agentId: string, options: { after?: string; limit: number }): Promise<{ batches: BatchRecord[]; hasMore: boolean }> {
    const { after, limit } = options;
    if (!(Number.isSafeInteger(limit) && limit >= 0)) throw new RangeError(`a list's limit must be a whole number from 0, not ${limit}`);
    // One more than asked: whether it comes is whether more follow.
    const ids = await this.redis.zrevrangebylex(this.agentKey(agentId), after === undefined ? "+" : `(${after}`, "-", "LIMIT", 0, limit + 1);
    const batches = (await this.read(ids.slice(0, limit))).map((each) => each.batch);
    return { batches, hasMore: ids.length > limit };
  }

  async active(): Promise<BatchRecord[]> {
    return (await this.read(await this.redis.zrange(this.activeKey, 0, -1))).map((each) => each.batch);
  }

  async update(id: string, change: Partial<BatchRecord>, claim?: JobClaim, check?: (current: BatchRecord) => void): Promise<BatchRecord> {
    let token = "";
    if (claim) {
      // The token at this batch's claim key is the fence: a claim on another batch never matches it.
      if (!(claim instanceof RedisLease && claim.jobId === id)) throw new BatchClaimLostError(id);
      token = claim.token;
    }
    if (!isBatchId(id)) throw new StoreError(`batch ${id} is not in the store`);
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const read = (await this.read([id]))[0];
      if (!read) throw new StoreError(`batch ${id} is not in the store`);
      const current = read.batch;
      const ended = ENDED_BATCH_STATUSES.has(current.status);
      // A claimed change to an ended batch is refused by the script (before `check` could word it otherwise).
      if (!(claim && ended)) check?.(current);
      const next = applyBatchChange(current, change);
      const counts = change.requestCounts;
      const outcome = await this.redis.gwBatchUpdate(
        this.recordKey(id),
        this.activeKey,
        this.countsKey,
        this.claimKey(id),
        id,
        read.json,
        storedJson(next),
        current.status,
        next.status,
        token,
        ended ? "1" : "0",
        ENDED_BATCH_STATUSES.has(next.status) ? "1" : "0",
        counts ? counts.completed : "",
        counts ? counts.failed : "",
      );
      switch (outcome) {
        case "ok":
          return next;
        case "lost":
          throw new BatchClaimLostError(id);
        case "ended":
          throw new BatchEndedError(id, current.status);
        case "missing":
          throw new StoreError(`batch ${id} is not in the store`);
        case "changed":
          continue;
        default:
          throw new Error(`unexpected reply from the batch update script: ${String(outcome)}`);
      }
    }
    throw new StoreError(`batch ${id} kept changing while it was updated; the change was not written`);
  }

  async addResult(id: string, result: BatchLineResult, claim: JobClaim): Promise<boolean> {
    if (!(Number.isSafeInteger(result.index) && result.index >= 0)) throw new RangeError(`a line's index is a whole number from 0, not ${result.index}`);
    if (!(claim instanceof RedisLease && claim.jobId === id)) throw new BatchClaimLostError(id);
    const outcome = await this.redis.gwBatchAddResult(
      this.recordKey(id),
      this.activeKey,
      this.claimKey(id),
      this.recordedKey(id),
      this.resultsKey(id),
      id,
      claim.token,
      result.index,
      result.ok ? "completed" : "failed",
      JSON.stringify({ index: result.index, ok: result.ok, line: result.line }),
    );
    switch (outcome) {
      case "ok":
        return true;
      case "recorded":
        return false;
      case "lost":
        throw new BatchClaimLostError(id);
      case "ended": {
        const status = (await this.get(id))?.status;
        if (status === undefined) throw new StoreError(`batch ${id} is not in the store`);
        throw new BatchEndedError(id, status);
      }
      case "missing":
        throw new StoreError(`batch ${id} is not in the store`);
      default:
        throw new Error(`unexpected reply from the batch result script: ${String(outcome)}`);
    }
  }

  async *results(id: string): AsyncIterable<BatchLineResult> {
    if (!isBatchId(id)) return;
    const key = this.resultsKey(id);
    for (let start = 0; ; start += RESULTS_CHUNK) {
      const lines = await this.redis.lrange(key, start, start + RESULTS_CHUNK - 1);
      for (const line of lines) yield parseResult(id, line);
      if (lines.length < RESULTS_CHUNK) return;
    }
  }

  async dropResults(id: string): Promise<void> {
    if (!isBatchId(id)) return;
    await this.redis.del(this.resultsKey(id), this.recordedKey(id));
  }

  async claim(id: string, ttlMs: number): Promise<JobClaim | null> {
    return takeLease(this.redis, this.claimKey(id), id, ttlMs);
  }

  async countByStatus(): Promise<Map<BatchStatus, number>> {
    const counts = await this.redis.hgetall(this.countsKey);
    const byStatus = new Map<BatchStatus, number>();
    for (const status of BATCH_STATUSES) {
      const count = Number(counts[status] ?? 0);
      if (count > 0) byStatus.set(status, count);
    }
    return byStatus;
  }

  /** The records of these ids, in order, each with the JSON it was read from; an id whose record is gone is left out. */
  private async read(ids: string[]): Promise<Array<{ batch: BatchRecord; json: string }>> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hmget(this.recordKey(id), "record", "completed", "failed");
    const replies = (await pipeline.exec()) ?? [];
    const batches: Array<{ batch: BatchRecord; json: string }> = [];
    ids.forEach((id, index) => {
      const [error, stored] = replies[index] ?? [new Error("no reply")];
      if (error) throw error;
      const [json, completed, failed] = stored as StoredBatch;
      if (json !== null) batches.push({ batch: parseBatch(id, json, completed, failed), json });
    });
    return batches;
  }

  private recordKey(id: string): string {
    return `${this.prefix}batch:record:${id}`;
  }

  private resultsKey(id: string): string {
    return `${this.prefix}batch:results:${id}`;
  }

  private recordedKey(id: string): string {
    return `${this.prefix}batch:recorded:${id}`;
  }

  private agentKey(agentId: string): string {
    return `${this.prefix}batch:agent:${agentId}`;
  }

  private claimKey(id: string): string {
    return `${this.prefix}batch:claim:${id}`;
  }
}

/** The record's JSON as kept: its line counts live beside it (the hash's `completed` and `failed`). */
function storedJson(batch: BatchRecord): string {
  return JSON.stringify({ ...batch, requestCounts: { total: batch.requestCounts.total } });
}

function parseBatch(id: string, json: string, completed: string | null, failed: string | null): BatchRecord {
  let batch: BatchRecord;
  try {
    batch = JSON.parse(json) as BatchRecord;
  } catch {
    throw new StoreError(`the batch ${id} in Redis is not a batch record`);
  }
  if (typeof batch !== "object" || batch === null || batch.id !== id || !BATCH_STATUSES.includes(batch.status) || typeof batch.requestCounts !== "object")
    throw new StoreError(`the batch ${id} in Redis is not a batch record`);
  return { ...batch, requestCounts: { total: batch.requestCounts.total, completed: Number(completed ?? 0), failed: Number(failed ?? 0) } };
}

function parseResult(id: string, text: string): BatchLineResult {
  const result = JSON.parse(text) as Partial<BatchLineResult> | null;
  if (!(result && Number.isSafeInteger(result.index) && typeof result.ok === "boolean" && typeof result.line === "string"))
    throw new StoreError(`a result of the batch ${id} in Redis is not a batch result`);
  return { index: result.index as number, ok: result.ok, line: result.line };
}
