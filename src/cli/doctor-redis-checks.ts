// `gw doctor` on a home whose state is in Redis: is that Redis set up as gw needs it
// (docs/decisions.md §21)? Its version, that it never evicts gw's keys, that it keeps what it is
// told (persistence), and how full it is. Each setting is read with CONFIG GET and, where a managed
// Redis refuses CONFIG (often renamed away), from INFO; what neither gives is a warning that it
// could not be read, never an error. Every command is bounded by the state's command timeout, and
// once one goes unanswered the rest are not asked: a hung Redis costs the doctor one timeout.
import { type Redis, ReplyError } from "ioredis";
import { isRedisFailure } from "../store/state-failure.js";
import type { DoctorCheck } from "./doctor-check-types.js";

/**
 * The oldest Redis gw runs on: 6.2. The gateway's scripts and commands need 5.0 (usage rows are
 * streams; a script reads Redis's clock before it writes, which 5.0 replicates by effect), and the
 * reports on a Redis home (`gw usage`, `gw keys list`) page through the streams with exclusive
 * XRANGE starts, which came in 6.2. Tested on 7.0.
 */
export const MINIMUM_REDIS = [6, 2] as const;
/** Memory used above this share of `maxmemory` is a warning: with noeviction Redis refuses writes when it is full. */
const MEMORY_WARN_SHARE = 0.8;

/**
 * Commands to one Redis that stop once one goes unanswered: what would ask after it fails at once
 * naming that failure, so a Redis that hangs mid-doctor costs one command timeout, not one each.
 */
export class RedisAsker {
  private stopped: string | null = null;

  constructor(private readonly redis: Redis) {}

  /** Why Redis is no longer asked (it stopped answering), or null. */
  get failure(): string | null {
    return this.stopped;
  }

  async ask<T>(command: () => Promise<T>): Promise<T> {
    if (this.stopped !== null) throw new Error(`not read: ${this.stopped}`);
    try {
      return await command();
    } catch (error) {
      // A reply error is Redis refusing one command (CONFIG renamed away, a script's error); anything else is Redis not answering.
      if (!(error instanceof ReplyError) && isRedisFailure(error)) this.stopped = `Redis stopped answering (${messageOf(error)})`;
      throw error;
    }
  }

  async info(section: string): Promise<Map<string, string>> {
    return parseInfo(await this.ask(() => this.redis.info(section)));
  }

  /** One CONFIG GET; a refusal (no CONFIG, no permission) is `{ refused }`, not Redis failing. */
  async config(name: string): Promise<{ value: string } | { refused: string }> {
    try {
      const reply = await this.ask(() => this.redis.config("GET", name));
      const value = Array.isArray(reply) ? reply[1] : undefined;
      return typeof value === "string" ? { value } : { refused: `CONFIG GET ${name} answered nothing` };
    } catch (error) {
      if (this.stopped !== null) throw error;
      return { refused: messageOf(error) };
    }
  }
}

/** The checks of a Redis the doctor reached: `redis` (version), `redis eviction`, `redis persistence`, `redis memory`. */
export async function redisServerChecks(asker: RedisAsker, location: string): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  for (const [name, check] of [
    ["redis", () => versionCheck(asker, location)],
    ["redis eviction", () => evictionCheck(asker)],
    ["redis persistence", () => persistenceCheck(asker)],
    ["redis memory", () => memoryCheck(asker)],
  ] as const) {
    try {
      checks.push({ name, ...(await check()) });
    } catch (error) {
      checks.push({ name, status: "error", detail: messageOf(error) });
    }
  }
  return checks;
}

type CheckResult = Omit<DoctorCheck, "name">;

async function versionCheck(asker: RedisAsker, location: string): Promise<CheckResult> {
  const version = (await asker.info("server")).get("redis_version") ?? "";
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const [needMajor, needMinor] = MINIMUM_REDIS;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return { status: "ok", version, detail: `redis ${version} answers at ${location}` };
  return {
    status: "error",
    version,
    detail:
      `redis ${version || "(version unknown)"} at ${location} is too old: gw needs ${needMajor}.${needMinor} or later ` +
      "(its usage rows are streams and its scripts read Redis's clock before writing, from 5.0; `gw usage` reads the streams with exclusive ranges, from 6.2)",
  };
}

async function evictionCheck(asker: RedisAsker): Promise<CheckResult> {
  const configured = await asker.config("maxmemory-policy");
  const policy = "value" in configured ? configured.value : (await asker.info("memory")).get("maxmemory_policy");
  if (policy === undefined)
    return { status: "warn", detail: `could not read maxmemory-policy (${"refused" in configured ? configured.refused : ""}); gw needs noeviction` };
  if (policy === "noeviction") return { status: "ok", detail: "maxmemory-policy noeviction: Redis refuses writes when full rather than dropping keys" };
  return {
    status: "error",
    detail:
      `maxmemory-policy is ${policy}: under memory pressure Redis may drop gw's keys, and a dropped hold, month's total or row id loses credits ` +
      "(agents spend them again) or bills a row twice; a dropped key document locks every key out. " +
      "Fix: `CONFIG SET maxmemory-policy noeviction`, and `maxmemory-policy noeviction` in redis.conf so it survives a restart",
  };
}

async function persistenceCheck(asker: RedisAsker): Promise<CheckResult> {
  const [appendonly, appendfsync, save] = [await asker.config("appendonly"), await asker.config("appendfsync"), await asker.config("save")];
  if (!("value" in appendonly)) {
    const aof = (await asker.info("persistence")).get("aof_enabled");
    const known = aof === undefined ? "" : `; INFO says the append-only file is ${aof === "1" ? "on" : "off"}`;
    return {
      status: "warn",
      detail: `could not read the persistence settings (${appendonly.refused})${known}; gw needs appendonly yes (appendfsync everysec)`,
    };
  }
  if (appendonly.value === "yes") {
    const fsync = "value" in appendfsync ? appendfsync.value : "(unknown)";
    if (fsync === "always")
      return { status: "ok", detail: "appendonly yes, appendfsync always: every write is on disk before Redis answers (the slowest setting)" };
    if (fsync === "everysec")
      return { status: "ok", detail: "appendonly yes, appendfsync everysec: a crash of the machine loses at most about the last second of writes" };
    return {
      status: "warn",
      detail: `appendonly yes, appendfsync ${fsync}: the system writes to disk when it likes (often every 30 s), and a crash of the machine loses that much billing; set appendfsync everysec`,
    };
  }
  const snapshots = "value" in save ? save.value.trim() : "";
  if (snapshots !== "")
    return {
      status: "warn",
      detail:
        `snapshots only (save "${snapshots}", appendonly no): a crash loses everything written since the last snapshot: usage rows and the credits they billed ` +
        "(agents can spend them again), keys created, config changes. Set `CONFIG SET appendonly yes` and `appendonly yes` in redis.conf",
    };
  // An error, not a warning: a restart of this Redis empties gw's whole state.
  return {
    status: "error",
    detail:
      "no persistence (appendonly no, no snapshots): a restart of Redis loses every agent, key, the shared config and every balance (each agent's credits come back whole). " +
      "Set `CONFIG SET appendonly yes` and `appendonly yes` in redis.conf",
  };
}

async function memoryCheck(asker: RedisAsker): Promise<CheckResult> {
  const memory = await asker.info("memory");
  const used = Number(memory.get("used_memory"));
  const configured = await asker.config("maxmemory");
  const limit = Number("value" in configured ? configured.value : memory.get("maxmemory"));
  if (!Number.isFinite(used)) return { status: "warn", detail: "could not read used_memory from INFO memory" };
  if (!Number.isFinite(limit) || limit === 0) return { status: "ok", detail: `${megabytes(used)} used, no maxmemory (bounded by the machine's memory)` };
  const share = used / limit;
  const detail = `${megabytes(used)} used of maxmemory ${megabytes(limit)} (${Math.round(share * 100)}%)`;
  if (share <= MEMORY_WARN_SHARE) return { status: "ok", detail };
  return { status: "warn", detail: `${detail}: when it is full Redis refuses writes and calls get 503 state_unavailable; raise maxmemory or free memory` };
}

function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0 && !line.startsWith("#")) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
