// Video jobs in Redis, for several gw instances whose pollers share the work (issue 23): each job
// is claimed by one instance at a time, so exactly one submits, polls, downloads and bills it.
//
// Keys (P = prefix, "gw:" by default):
//   P video:job:<id>       string  the job's JSON document (the same one the file store writes)
//   P video:input:<id>     string  the reference photo's bytes, deleted when the job ends
//   P video:active         zset    ids of the jobs not ended, all score 0: lexical order = ULID = oldest first
//   P video:agent:<agent>  zset    an agent's job ids, all score 0 (listed newest first)
//   P video:counts         hash    status -> how many jobs are in it (the metrics)
//   P video:claim:<id>     string  the claim's random token, with the lease as its TTL (SET NX PX)
//   P video:working:<group> zset   ids of the jobs claimed with a slot of the group (a provider) -> lease deadline (ms, Redis's clock)
// Create, update, renew and release are one Lua script each (EVALSHA through defineCommand), so
// the indexes and counts move with the document, and the claim is checked in the same step that
// writes (fencing). The keys are not under one hash tag: this needs one Redis (or a primary with
// replicas), not Redis Cluster.
import { randomUUID } from "node:crypto";
import type { Redis, Result } from "ioredis";
import { type ClaimSlot, checkLease, type JobClaim } from "./job-claims.js";
import { defineLeaseCommands, RedisLease, takeLease } from "./redis-leases.js";
import { StoreError } from "./store-error.js";
import {
  applyJobChange,
  isVideoJobId,
  TERMINAL_STATUSES,
  VideoJobClaimLostError,
  VideoJobEndedError,
  type VideoJobRecord,
  type VideoJobRecords,
  type VideoJobStatus,
} from "./video-jobs.js";

type ScriptArgument = string | number | Buffer;

declare module "ioredis" {
  interface RedisCommander<Context> {
    gwVideoCreate(...args: ScriptArgument[]): Result<unknown, Context>;
    gwVideoUpdate(...args: ScriptArgument[]): Result<unknown, Context>;
    gwVideoClaimSlot(...args: ScriptArgument[]): Result<unknown, Context>;
    gwVideoRenewSlot(...args: ScriptArgument[]): Result<unknown, Context>;
    gwVideoReleaseSlot(...args: ScriptArgument[]): Result<unknown, Context>;
  }
}

const TERMINAL_LUA = `local terminal = { SUCCEEDED = true, FAILED = true, CANCELLED = true }`;

// KEYS: job, input, active, agent, counts. ARGV: id, JSON, status, photo ("" for none).
const CREATE = `
${TERMINAL_LUA}
if redis.call('SET', KEYS[1], ARGV[2], 'NX') == false then return 0 end
if ARGV[4] ~= '' then redis.call('SET', KEYS[2], ARGV[4]) end
if not terminal[ARGV[3]] then redis.call('ZADD', KEYS[3], 0, ARGV[1]) end
redis.call('ZADD', KEYS[4], 0, ARGV[1])
redis.call('HINCRBY', KEYS[5], ARGV[3], 1)
return 1
`;

// Compare-and-set of the document, checked against the claim in the same step.
// KEYS: job, input, active, counts, claim. ARGV: id, the JSON read, the new JSON, old status,
// new status, claim token ("" for an unclaimed change).
// Returns "ok", "changed" (the document moved on since it was read: read again), "lost" (the claim
// is not held), "ended" (a claimed change to an ended job) or "missing".
const UPDATE = `
${TERMINAL_LUA}
local current = redis.call('GET', KEYS[1])
if current == false then return 'missing' end
if ARGV[6] ~= '' then
  if redis.call('GET', KEYS[5]) ~= ARGV[6] then return 'lost' end
  if terminal[ARGV[4]] and current == ARGV[2] then return 'ended' end
end
if current ~= ARGV[2] then return 'changed' end
redis.call('SET', KEYS[1], ARGV[3])
if ARGV[4] ~= ARGV[5] then
  redis.call('HINCRBY', KEYS[4], ARGV[4], -1)
  redis.call('HINCRBY', KEYS[4], ARGV[5], 1)
end
if terminal[ARGV[5]] then
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('DEL', KEYS[2])
else
  redis.call('ZADD', KEYS[3], 0, ARGV[1])
end
return 'ok'
`;

// The same three for a claim that takes a slot of a group: the group's zset lists the jobs holding
// one, each until its claim's deadline, so a slot whose instance died comes back with its claim.
const LUA_SLOT_CLOCK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

// KEYS: claim, working. ARGV: token, lease (ms), id, limit. Returns 1 when claimed.
const CLAIM_SLOT = `${LUA_SLOT_CLOCK}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 0 end
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 0 end
redis.call('ZADD', KEYS[2], string.format('%d', now + tonumber(ARGV[2])), ARGV[3])
return 1
`;

// KEYS: claim, working. ARGV: token, lease (ms), id.
const RENEW_SLOT = `${LUA_SLOT_CLOCK}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], string.format('%d', now + tonumber(ARGV[2])), ARGV[3])
return 1
`;

// KEYS: claim, working. ARGV: token, id.
const RELEASE_SLOT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[2])
end
return 1
`;

/** How many times an update reads again when another writer changed the job in between. */
const UPDATE_ATTEMPTS = 20;

const STATUSES: readonly VideoJobStatus[] = ["QUEUED", "SUBMITTED", "SUCCEEDED", "FAILED", "CANCELLED"];

export class RedisVideoJobStore implements VideoJobRecords {
  private readonly activeKey: string;
  private readonly countsKey: string;

  constructor(
    private readonly redis: Redis,
    /** Prepended to every key, so several deployments (or tests) can share one Redis. */
    private readonly prefix = "gw:",
  ) {
    this.activeKey = `${prefix}video:active`;
    this.countsKey = `${prefix}video:counts`;
    redis.defineCommand("gwVideoCreate", { numberOfKeys: 5, lua: CREATE });
    redis.defineCommand("gwVideoUpdate", { numberOfKeys: 5, lua: UPDATE });
    defineLeaseCommands(redis);
    redis.defineCommand("gwVideoClaimSlot", { numberOfKeys: 2, lua: CLAIM_SLOT });
    redis.defineCommand("gwVideoRenewSlot", { numberOfKeys: 2, lua: RENEW_SLOT });
    redis.defineCommand("gwVideoReleaseSlot", { numberOfKeys: 2, lua: RELEASE_SLOT });
  }

  async get(id: string): Promise<VideoJobRecord | undefined> {
    if (!isVideoJobId(id)) return undefined;
    const text = await this.redis.get(this.jobKey(id));
    return text === null ? undefined : parseJob(id, text);
  }

  async countByStatus(): Promise<Map<VideoJobStatus, number>> {
    const counts = await this.redis.hgetall(this.countsKey);
    const byStatus = new Map<VideoJobStatus, number>();
    for (const status of STATUSES) {
      const count = Number(counts[status] ?? 0);
      if (count > 0) byStatus.set(status, count);
    }
    return byStatus;
  }

  async active(): Promise<VideoJobRecord[]> {
    return this.read(await this.redis.zrange(this.activeKey, 0, -1));
  }

  async list(agentId: string, limit: number): Promise<VideoJobRecord[]> {
    if (limit <= 0) return [];
    return this.read(await this.redis.zrevrange(this.agentKey(agentId), 0, limit - 1));
  }

  async create(job: VideoJobRecord, image?: Buffer): Promise<void> {
    if (!isVideoJobId(job.id)) throw new RangeError(`${job.id} is not a video job id`);
    const created = await this.redis.gwVideoCreate(
      this.jobKey(job.id),
      this.inputKey(job.id),
      this.activeKey,
      this.agentKey(job.agentId),
      this.countsKey,
      job.id,
      JSON.stringify(job),
      job.status,
      image ?? "",
    );
    if (created !== 1) throw new StoreError(`video job ${job.id} is already in the store`);
  }

  async update(id: string, change: Partial<VideoJobRecord>, claim?: JobClaim, check?: (current: VideoJobRecord) => void): Promise<VideoJobRecord> {
    let token = "";
    if (claim) {
      // The token at this job's claim key is the fence: a claim on another job never matches it.
      if (!(claim instanceof RedisLease && claim.jobId === id)) throw new VideoJobClaimLostError(id);
      token = claim.token;
    }
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const text = await this.redis.get(this.jobKey(id));
      if (text === null) throw new StoreError(`video job ${id} is not in the store`);
      const current = parseJob(id, text);
      // A claimed change to an ended job is refused by the script (before `check` could word it otherwise).
      if (!(claim && TERMINAL_STATUSES.has(current.status))) check?.(current);
      const next = applyJobChange(current, change);
      const outcome = await this.redis.gwVideoUpdate(
        this.jobKey(id),
        this.inputKey(id),
        this.activeKey,
        this.countsKey,
        this.claimKey(id),
        id,
        text,
        JSON.stringify(next),
        current.status,
        next.status,
        token,
      );
      switch (outcome) {
        case "ok":
          return next;
        case "lost":
          throw new VideoJobClaimLostError(id);
        case "ended":
          throw new VideoJobEndedError(id, current.status);
        case "missing":
          throw new StoreError(`video job ${id} is not in the store`);
        case "changed":
          continue;
        default:
          throw new Error(`unexpected reply from the video update script: ${String(outcome)}`);
      }
    }
    throw new StoreError(`video job ${id} kept changing while it was updated; the change was not written`);
  }

  async readImage(id: string): Promise<Buffer | undefined> {
    if (!isVideoJobId(id)) return undefined;
    return (await this.redis.getBuffer(this.inputKey(id))) ?? undefined;
  }

  async claim(id: string, ttlMs: number, slot?: ClaimSlot): Promise<JobClaim | null> {
    checkLease(ttlMs);
    const token = randomUUID();
    if (slot) {
      if (!(Number.isSafeInteger(slot.limit) && slot.limit > 0)) throw new RangeError(`a slot limit must be a whole number above 0, not ${slot.limit}`);
      const working = `${this.prefix}video:working:${slot.group}`;
      const taken = await this.redis.gwVideoClaimSlot(this.claimKey(id), working, token, ttlMs, id, slot.limit);
      return taken === 1 ? new RedisSlotClaim(this.redis, id, token, this.claimKey(id), ttlMs, working) : null;
    }
    return takeLease(this.redis, this.claimKey(id), id, ttlMs);
  }

  /** The documents of these ids, in order; an id whose document is gone is left out. */
  private async read(ids: string[]): Promise<VideoJobRecord[]> {
    if (ids.length === 0) return [];
    const texts = await this.redis.mget(...ids.map((id) => this.jobKey(id)));
    const jobs: VideoJobRecord[] = [];
    ids.forEach((id, index) => {
      const text = texts[index];
      if (text !== null && text !== undefined) jobs.push(parseJob(id, text));
    });
    return jobs;
  }

  private jobKey(id: string): string {
    return `${this.prefix}video:job:${id}`;
  }

  private inputKey(id: string): string {
    return `${this.prefix}video:input:${id}`;
  }

  private agentKey(agentId: string): string {
    return `${this.prefix}video:agent:${agentId}`;
  }

  private claimKey(id: string): string {
    return `${this.prefix}video:claim:${id}`;
  }
}

/** A claim that also holds one of its group's slots: renewed and released with the slot. */
class RedisSlotClaim extends RedisLease {
  constructor(
    redis: Redis,
    jobId: string,
    token: string,
    key: string,
    ttlMs: number,
    /** The group's zset of the jobs holding one of its slots. */
    private readonly working: string,
  ) {
    super(redis, jobId, token, key, ttlMs);
  }

  override async renew(): Promise<boolean> {
    return (await this.connection.gwVideoRenewSlot(this.key, this.working, this.token, this.ttlMs, this.jobId)) === 1;
  }

  override async release(): Promise<void> {
    await this.connection.gwVideoReleaseSlot(this.key, this.working, this.token, this.jobId);
  }
}

function parseJob(id: string, text: string): VideoJobRecord {
  const job: unknown = JSON.parse(text);
  if (
    typeof job !== "object" ||
    job === null ||
    (job as { id?: unknown }).id !== id ||
    !STATUSES.includes((job as { status?: VideoJobStatus }).status as VideoJobStatus)
  )
    throw new StoreError(`the video job ${id} in Redis is not a video job document`);
  return job as VideoJobRecord;
}
