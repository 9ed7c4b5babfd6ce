// The storage index and quotas in Redis (FileStateRecords), for several `gw serve` instances that
// share one blob store (issue 23). Every check-and-take is one Lua script (EVALSHA through
// defineCommand), so two instances can never pass an agent's quota or operations limit together,
// and a record moves with its counts in the same step.
//
// Keys (P = prefix, "gw:" by default). An agent's keys share its hash tag {f:<agentId>}:
//   P file:<id>               string  the record's JSON (the same document the embedded store writes; the scripts
//                                     read its state and size and never rewrite it, so every field is kept as saved)
//   P{f:A}:files              zset    A's ready and pending file ids, all score 0: lexical order = ULID = oldest first
//   P{f:A}:pending            zset    A's presigned uploads waiting for bytes -> their link's expiry (unix s)
//   P{f:A}:space              hash    used -> bytes of A's files; reserved -> bytes granted to uploads in flight
//   P{f:A}:grants             hash    upload id -> bytes granted to it
//   P{f:A}:grant-leases       zset    upload id -> when its grant lapses (ms, Redis's clock)
//   P{f:A}:ops:<YYYY-MM>      string  operations counted in that period (kept ~13 months)
//   P{f:A}:ops-taken          zset    operations in flight -> when they lapse (ms)
//   P file-ops:<YYYY-MM>      stream  one entry per counted operation, field r = the row's JSON
//   P files:totals            hash    files, bytes over every agent (the metrics)
//   P files:uploading         zset    ids of multipart uploads in progress -> when they started (ms)
//   P file-receiving:<id>     string  the token of the upload receiving a presigned link's bytes (SET NX PX)
// The records, the stream and the receiving claims are not under an agent's tag: one Redis (or a
// primary with replicas), not Redis Cluster.
//
// A grant, an operation in flight and a receiving claim are leased (FILE_LEASE_MS, renewed by each
// further grant): an instance that dies mid-upload holds the agent's space and operation for that
// long at most. A grant that lapsed under an upload still streaming is not taken twice: saving the
// file counts its size once, so the agent can pass the quota by that file once, never more.
import { randomUUID } from "node:crypto";
import type { Redis, Result } from "ioredis";
import type { OperationRow } from "./file-operations-log.js";
import type { FileRecord } from "./file-records.js";
import {
  type ByteGrant,
  FILE_LEASE_MS,
  type FileCursor,
  type FileSpace,
  type FileStateRecords,
  type OperationTicket,
  type ReceivingClaim,
  type SaveOptions,
} from "./file-state.js";
import { StoreError } from "./store-error.js";

type ScriptArgument = string | number;

declare module "ioredis" {
  interface RedisCommander<Context> {
    gwFileGrant(...args: ScriptArgument[]): Result<unknown, Context>;
    gwFileReturn(...args: ScriptArgument[]): Result<unknown, Context>;
    gwFileSave(...args: ScriptArgument[]): Result<unknown, Context>;
    gwFileRemove(...args: ScriptArgument[]): Result<unknown, Context>;
    gwFileDropExpired(...args: ScriptArgument[]): Result<unknown, Context>;
    gwFileTakeOperation(...args: ScriptArgument[]): Result<unknown, Context>;
    gwFileCommitOperation(...args: ScriptArgument[]): Result<unknown, Context>;
    gwFileUnclaim(...args: ScriptArgument[]): Result<unknown, Context>;
  }
}

/** Counts of a period outlive it long enough for any report on it. */
const OPERATION_COUNT_TTL_SECONDS = 400 * 24 * 3600;
/** Lapsed grants returned per script: a backlog is returned over several calls, never in one long script. */
const SWEEP_LIMIT = 64;

// Byte counts are whole and below 2^53; they go to Redis through int() because redis.call would
// print a large number as "1e+15", which HINCRBY refuses.
const LUA_COMMON = `
local function int(n) return string.format('%d', n) end
local function num(value) return tonumber(value) or 0 end
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function returnGrant(space, grants, leases, id)
  local bytes = num(redis.call('HGET', grants, id))
  redis.call('HDEL', grants, id)
  redis.call('ZREM', leases, id)
  if bytes ~= 0 then redis.call('HINCRBY', space, 'reserved', int(-bytes)) end
end
-- Delete a record with its listing and counts; its JSON, or false when there was none.
local function removeRecord(record, files, pending, space, totals, uploading, id)
  local old = redis.call('GET', record)
  redis.call('ZREM', files, id)
  redis.call('ZREM', pending, id)
  redis.call('ZREM', uploading, id)
  if not old then return false end
  redis.call('DEL', record)
  local o = cjson.decode(old)
  if o.state ~= 'uploading' then
    local size = tonumber(o.sizeBytes)
    redis.call('HINCRBY', space, 'used', int(-size))
    redis.call('HINCRBY', totals, 'bytes', int(-size))
    redis.call('HINCRBY', totals, 'files', -1)
  end
  return old
end
`;

// KEYS space, grants, leases. ARGV upload id, min, max, limit, lease (ms).
// Returns { granted (1/0), bytes granted, used, reserved } (used and reserved before the grant).
const GRANT = `${LUA_COMMON}
local now = nowMs()
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, ${SWEEP_LIMIT})
for _, id in ipairs(lapsed) do returnGrant(KEYS[1], KEYS[2], KEYS[3], id) end
local used = num(redis.call('HGET', KEYS[1], 'used'))
local reserved = num(redis.call('HGET', KEYS[1], 'reserved'))
local room = tonumber(ARGV[4]) - used - reserved
if room < tonumber(ARGV[2]) then return { 0, 0, int(used), int(reserved) } end
local amount = math.min(tonumber(ARGV[3]), room)
if amount > 0 then
  redis.call('HINCRBY', KEYS[2], ARGV[1], int(amount))
  redis.call('HINCRBY', KEYS[1], 'reserved', int(amount))
end
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[5]), ARGV[1])
return { 1, int(amount), int(used), int(reserved) }
`;

// KEYS space, grants, leases. ARGV upload id.
const RETURN = `${LUA_COMMON}
returnGrant(KEYS[1], KEYS[2], KEYS[3], ARGV[1])
return 1
`;

// KEYS record, files, pending, space, grants, leases, totals, uploading.
// ARGV id, JSON, state, size, link expiry (pending), grant ('' for none), '1' to write only over a record that is there.
const SAVE = `${LUA_COMMON}
local old = redis.call('GET', KEYS[1])
if ARGV[7] == '1' and not old then return 0 end
local listed, oldSize = false, 0
if old then
  local o = cjson.decode(old)
  if o.state ~= 'uploading' then listed, oldSize = true, tonumber(o.sizeBytes) end
end
redis.call('SET', KEYS[1], ARGV[2])
if ARGV[6] ~= '' then returnGrant(KEYS[4], KEYS[5], KEYS[6], ARGV[6]) end
if ARGV[3] == 'uploading' then
  redis.call('ZADD', KEYS[8], nowMs(), ARGV[1])
  return 1
end
redis.call('ZREM', KEYS[8], ARGV[1])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
if ARGV[3] == 'pending' then redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1]) else redis.call('ZREM', KEYS[3], ARGV[1]) end
local delta = tonumber(ARGV[4]) - oldSize
if delta ~= 0 then
  redis.call('HINCRBY', KEYS[4], 'used', int(delta))
  redis.call('HINCRBY', KEYS[7], 'bytes', int(delta))
end
if not listed then redis.call('HINCRBY', KEYS[7], 'files', 1) end
return 1
`;

// KEYS record, files, pending, space, totals, uploading. ARGV id.
const REMOVE = `${LUA_COMMON}
return removeRecord(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1])
`;

// KEYS files, pending, space, totals, uploading. ARGV now (unix s), record key prefix, receiving key prefix, limit.
// The removed records' JSON: links that expired before now and receive nothing.
const DROP_EXPIRED = `${LUA_COMMON}
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[4]))
local dropped = {}
for _, id in ipairs(ids) do
  if redis.call('EXISTS', ARGV[3] .. id) == 0 then
    local old = removeRecord(ARGV[2] .. id, KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], id)
    if old then table.insert(dropped, old) end
  end
end
return dropped
`;

// KEYS count, taken. ARGV ticket, limit, lease (ms). 1 when taken, 0 when none is left.
const TAKE_OPERATION = `${LUA_COMMON}
local now = nowMs()
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if num(redis.call('GET', KEYS[1])) + redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
return 1
`;

// KEYS count, taken, stream. ARGV ticket, row JSON, count TTL (s).
const COMMIT_OPERATION = `
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('XADD', KEYS[3], '*', 'r', ARGV[2])
return 1
`;

// KEYS claim. ARGV token.
const UNCLAIM = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;

/** Each grant is a round trip: a 50 MB upload asks about 13 times. */
const GRANT_STEP_BYTES = 4 * 1024 * 1024;

export class RedisFileState implements FileStateRecords {
  readonly grantStepBytes = GRANT_STEP_BYTES;
  private readonly totalsKey: string;
  private readonly uploadingKey: string;

  constructor(
    private readonly redis: Redis,
    /** Prepended to every key, so several deployments (or tests) can share one Redis. */
    private readonly prefix = "gw:",
    private readonly leaseMs = FILE_LEASE_MS,
  ) {
    this.totalsKey = `${prefix}files:totals`;
    this.uploadingKey = `${prefix}files:uploading`;
    redis.defineCommand("gwFileGrant", { numberOfKeys: 3, lua: GRANT });
    redis.defineCommand("gwFileReturn", { numberOfKeys: 3, lua: RETURN });
    redis.defineCommand("gwFileSave", { numberOfKeys: 8, lua: SAVE });
    redis.defineCommand("gwFileRemove", { numberOfKeys: 6, lua: REMOVE });
    redis.defineCommand("gwFileDropExpired", { numberOfKeys: 5, lua: DROP_EXPIRED });
    redis.defineCommand("gwFileTakeOperation", { numberOfKeys: 2, lua: TAKE_OPERATION });
    redis.defineCommand("gwFileCommitOperation", { numberOfKeys: 3, lua: COMMIT_OPERATION });
    redis.defineCommand("gwFileUnclaim", { numberOfKeys: 1, lua: UNCLAIM });
  }

  async page(agentId: string, page: number, limit: number): Promise<{ records: FileRecord[]; total: number }> {
    const start = (page - 1) * limit;
    const [total, ids] = await Promise.all([
      this.redis.zcard(this.agentKey(agentId, "files")),
      this.redis.zrevrange(this.agentKey(agentId, "files"), start, start + limit - 1),
    ]);
    return { records: await this.readListed(ids), total };
  }

  async listFrom(agentId: string, cursor: FileCursor): Promise<{ records: FileRecord[]; hasMore: boolean }> {
    const key = this.agentKey(agentId, "files");
    // Every score is 0, so the ids' lexical order is their order; one more than asked tells whether more follow.
    const past = cursor.after === undefined ? undefined : `(${cursor.after}`;
    const ids =
      cursor.order === "asc"
        ? await this.redis.zrangebylex(key, past ?? "-", "+", "LIMIT", 0, cursor.limit + 1)
        : await this.redis.zrevrangebylex(key, past ?? "+", "-", "LIMIT", 0, cursor.limit + 1);
    return { records: await this.readListed(ids.slice(0, cursor.limit)), hasMore: ids.length > cursor.limit };
  }

  async find(id: string): Promise<FileRecord | undefined> {
    const text = await this.redis.get(this.recordKey(id));
    if (text === null) return undefined;
    const record = parseRecord(id, text);
    return record.state === "uploading" ? undefined : record;
  }

  async space(agentId: string): Promise<FileSpace> {
    const [used, reserved] = await this.redis.hmget(this.agentKey(agentId, "space"), "used", "reserved");
    return { usedBytes: Number(used ?? 0), reservedBytes: Number(reserved ?? 0) };
  }

  async operationCount(agentId: string, period: string): Promise<number> {
    return Number((await this.redis.get(this.operationCountKey(agentId, period))) ?? 0);
  }

  /**
   * `gw migrate`: the agent's counted operations of a period become the embedded home's count (set,
   * not added, so running it again changes nothing). Not on the port: only a migration into Redis sets counts.
   */
  async importOperationCount(agentId: string, period: string, count: number): Promise<void> {
    await this.redis.set(this.operationCountKey(agentId, period), count, "EX", OPERATION_COUNT_TTL_SECONDS);
  }

  async takeOperation(agentId: string, period: string, limit: number): Promise<OperationTicket | null> {
    const ticket = randomUUID();
    const taken = this.agentKey(agentId, "ops-taken");
    if (Number(await this.redis.gwFileTakeOperation(this.operationCountKey(agentId, period), taken, ticket, limit, this.leaseMs)) !== 1) return null;
    let settled = false;
    return {
      commit: async (row: OperationRow) => {
        if (settled) return;
        settled = true;
        const rowPeriod = row.time.slice(0, 7);
        await this.redis.gwFileCommitOperation(
          this.operationCountKey(agentId, rowPeriod),
          taken,
          `${this.prefix}file-ops:${rowPeriod}`,
          ticket,
          JSON.stringify(row),
          OPERATION_COUNT_TTL_SECONDS,
        );
      },
      release: async () => {
        if (settled) return;
        settled = true;
        await this.redis.zrem(taken, ticket);
      },
    };
  }

  async grantBytes(agentId: string, uploadId: string, minBytes: number, maxBytes: number, limitBytes: number): Promise<ByteGrant> {
    const reply = (await this.redis.gwFileGrant(...this.grantKeys(agentId), uploadId, minBytes, maxBytes, limitBytes, this.leaseMs)) as unknown[];
    return { ok: Number(reply[0]) === 1, grantedBytes: Number(reply[1]), usedBytes: Number(reply[2]), reservedBytes: Number(reply[3]) };
  }

  async returnBytes(agentId: string, uploadId: string): Promise<void> {
    await this.redis.gwFileReturn(...this.grantKeys(agentId), uploadId);
  }

  async save(record: FileRecord, options: SaveOptions = {}): Promise<boolean> {
    const saved = await this.redis.gwFileSave(
      this.recordKey(record.id),
      this.agentKey(record.agentId, "files"),
      this.agentKey(record.agentId, "pending"),
      ...this.grantKeys(record.agentId),
      this.totalsKey,
      this.uploadingKey,
      record.id,
      JSON.stringify(record),
      record.state,
      record.sizeBytes,
      record.uploadExpires ?? 0,
      options.grant ?? "",
      options.ifPresent ? "1" : "",
    );
    return Number(saved) === 1;
  }

  async abandonedUploads(olderThanMs: number, limit: number): Promise<FileRecord[]> {
    // On Redis's clock, which timed the intents (SAVE's nowMs).
    const [seconds, micros] = await this.redis.time();
    const before = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - olderThanMs;
    const ids = await this.redis.zrangebyscore(this.uploadingKey, "-inf", before, "LIMIT", 0, limit);
    if (ids.length === 0) return [];
    const texts = await this.redis.mget(...ids.map((id) => this.recordKey(id)));
    const abandoned: FileRecord[] = [];
    // Finished or removed meanwhile: only the index entry was left.
    const stale: string[] = [];
    for (const [index, id] of ids.entries()) {
      const text = texts[index];
      const record = text === null || text === undefined ? undefined : parseRecord(id, text);
      if (record?.state === "uploading") abandoned.push(record);
      else stale.push(id);
    }
    if (stale.length > 0) await this.redis.zrem(this.uploadingKey, ...stale);
    return abandoned;
  }

  async remove(record: Pick<FileRecord, "agentId" | "id">): Promise<FileRecord | undefined> {
    const old = await this.redis.gwFileRemove(
      this.recordKey(record.id),
      this.agentKey(record.agentId, "files"),
      this.agentKey(record.agentId, "pending"),
      this.agentKey(record.agentId, "space"),
      this.totalsKey,
      this.uploadingKey,
      record.id,
    );
    const removed = typeof old === "string" ? parseRecord(record.id, old) : undefined;
    return removed?.state === "uploading" ? undefined : removed;
  }

  async claimReceiving(id: string, ttlMs: number): Promise<ReceivingClaim | null> {
    const token = randomUUID();
    const key = `${this.prefix}file-receiving:${id}`;
    if ((await this.redis.set(key, token, "PX", ttlMs, "NX")) !== "OK") return null;
    return {
      release: async () => {
        await this.redis.gwFileUnclaim(key, token);
      },
    };
  }

  async dropExpiredUploads(agentId: string, nowSeconds: number): Promise<FileRecord[]> {
    const dropped = (await this.redis.gwFileDropExpired(
      this.agentKey(agentId, "files"),
      this.agentKey(agentId, "pending"),
      this.agentKey(agentId, "space"),
      this.totalsKey,
      this.uploadingKey,
      nowSeconds,
      `${this.prefix}file:`,
      `${this.prefix}file-receiving:`,
      SWEEP_LIMIT,
    )) as string[];
    return dropped.map((text) => parseRecord(undefined, text));
  }

  async totals(): Promise<{ files: number; bytes: number }> {
    const [files, bytes] = await this.redis.hmget(this.totalsKey, "files", "bytes");
    return { files: Number(files ?? 0), bytes: Number(bytes ?? 0) };
  }

  async close(): Promise<void> {
    // The connection is the state's, closed with it.
  }

  /** The records of listed ids, in their order, in one round trip; one removed since it was listed is left out. */
  private async readListed(ids: string[]): Promise<FileRecord[]> {
    if (ids.length === 0) return [];
    const texts = await this.redis.mget(ids.map((id) => this.recordKey(id)));
    const records: FileRecord[] = [];
    texts.forEach((text, index) => {
      if (text !== null) records.push(parseRecord(ids[index] ?? "", text));
    });
    return records;
  }

  private recordKey(id: string): string {
    return `${this.prefix}file:${id}`;
  }

  private agentKey(agentId: string, name: string): string {
    return `${this.prefix}{f:${agentId}}:${name}`;
  }

  private operationCountKey(agentId: string, period: string): string {
    return this.agentKey(agentId, `ops:${period}`);
  }

  private grantKeys(agentId: string): [string, string, string] {
    return [this.agentKey(agentId, "space"), this.agentKey(agentId, "grants"), this.agentKey(agentId, "grant-leases")];
  }
}

function parseRecord(id: string | undefined, text: string): FileRecord {
  let record: Partial<FileRecord> | null = null;
  try {
    record = JSON.parse(text) as Partial<FileRecord> | null;
  } catch {
    // reported below
  }
  if (!record || typeof record !== "object" || typeof record.id !== "string" || (id !== undefined && record.id !== id) || typeof record.agentId !== "string") {
    throw new StoreError(`the file record ${id ?? "(dropped upload)"} in Redis is not a gw file record`);
  }
  return record as FileRecord;
}
