// `gw doctor` on a home whose config puts the state in Redis (docs/decisions.md §21): connect
// within about twice the command timeout (never throws), read the config every instance runs (the
// shared document with this file's `server` and `state`; not seeded when absent, as the key
// document is not created), and check the Redis itself (doctor-redis-checks.ts), the blob store,
// and the agents, keys, usage and balances it holds, not the home's unused files. Balances are read
// as the ledger reads them (which returns the credits of holds whose instance died, as any read
// does). Once one command goes unanswered, the rest say so at once.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Redis } from "ioredis";
import { readBootstrap } from "../config/bootstrap-sections.js";
import type { StateSettings } from "../config/config-schema.js";
import type { HomePaths } from "../config/paths.js";
import type { Config } from "../config/resolved-config.js";
import type { MetadataData } from "../store/records.js";
import { RedisConfigStore } from "../store/redis-config-store.js";
import { openRedis, redactedUrl } from "../store/redis-connection.js";
import { RedisCreditStore } from "../store/redis-credit-store.js";
import { RedisMetadataStore } from "../store/redis-metadata-store.js";
import { RedisUsageHistory } from "../store/redis-usage-history.js";
import { periodOf } from "../store/usage-log.js";
import type { UsageRange } from "../store/usage-rows.js";
import { blobsCheck } from "./doctor-blobs-check.js";
import type { BalanceTotals, DoctorCheck } from "./doctor-check-types.js";
import { RedisAsker, redisServerChecks } from "./doctor-redis-checks.js";
import { balancesCheck, countsOf, countsOfMetadata, driversCheck, type HomeState, messageOf, rawOf } from "./doctor-state-lines.js";

/**
 * `file` is this home's config.json read whole, or why it does not read: an instance's file may
 * hold only its `server` and `state` sections, which is fine once Redis holds the shared config.
 */
export async function openRedisHomeState(paths: HomePaths, state: StateSettings, file: Config | Error, env: NodeJS.ProcessEnv, now: Date): Promise<HomeState> {
  const location = redactedUrl(state.url ?? "");
  const fileConfig = file instanceof Error ? undefined : file;
  const configCheck: DoctorCheck =
    file instanceof Error
      ? { name: "config", status: "error", path: paths.config, detail: file.message }
      : { name: "config", status: "ok", path: paths.config, detail: countsOf(file) };
  const connected = await connectWithin(state, location);
  if (typeof connected === "string") {
    configCheck.detail += ` (this file's; the shared config in Redis could not be read: ${location} did not answer)`;
    const notRead = `not read: Redis at ${location} did not answer (see the redis check)`;
    return {
      configCheck,
      config: fileConfig,
      raw: rawOf(paths.config),
      checks: async () => [
        driversCheck(state, fileConfig?.storage, paths),
        { name: "redis", status: "error", detail: connected },
        ...["metadata", "usage", "balances"].map((name): DoctorCheck => ({ name, status: "error", detail: notRead })),
      ],
      close() {},
    };
  }
  const redis = connected;
  const asker = new RedisAsker(redis);
  let config: Config | undefined = fileConfig;
  let raw = rawOf(paths.config);
  try {
    const shared = await asker.ask(() => RedisConfigStore.peek(redis, readBootstrap(paths.config, env), env));
    if (shared) {
      ({ config, raw } = shared);
      Object.assign(configCheck, {
        status: "ok",
        detail: `${countsOf(shared.config)} (the shared config in ${shared.label}; server and state from ${paths.config})`,
      });
    } else configCheck.detail += " (Redis holds no shared config yet: the first server or `gw` command to reach it seeds it from this file)";
  } catch (error) {
    if (asker.failure === null) {
      // An invalid shared document: every server refuses to start with it.
      Object.assign(configCheck, { status: "error", detail: messageOf(error) });
      config = undefined;
    } else configCheck.detail += ` (this file's; the shared config in Redis was not read: ${asker.failure})`;
  }
  const storage = (config ?? fileConfig)?.storage;
  return {
    configCheck,
    config,
    raw,
    checks: async () => {
      const [server, blobs] = await Promise.all([redisServerChecks(asker, location), config && storage ? blobsCheck(storage) : undefined]);
      return [driversCheck(state, storage, paths), ...server, ...(blobs ? [blobs] : []), ...(await redisStateChecks(paths, asker, redis, state.prefix, now))];
    },
    close() {
      redis.disconnect();
    },
  };
}

/** metadata, usage and balances from Redis; once Redis stops answering, the rest say so without asking again. */
async function redisStateChecks(paths: HomePaths, asker: RedisAsker, redis: Redis, prefix: string, now: Date): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const period = periodOf(now);
  let metadata: MetadataData | null | undefined;
  try {
    metadata = await asker.ask(() => RedisMetadataStore.peek(redis, prefix));
    checks.push({
      name: "metadata",
      status: "ok",
      detail: metadata
        ? `${countsOfMetadata(metadata)} in Redis (${prefix}meta)`
        : `no agents or keys in Redis yet (${prefix}meta is made by the first server or \`gw keys create\`)`,
    });
  } catch (error) {
    checks.push({ name: "metadata", status: "error", detail: messageOf(error) });
  }

  const history = new RedisUsageHistory(redis, prefix);
  let periods: string[] | undefined;
  try {
    periods = await asker.ask(() => history.periods());
    let rows = 0;
    const skipped: string[] = [];
    await asker.ask(async () => {
      const reading = await history.reading(monthOf(period));
      for await (const batch of reading.rows((warning) => skipped.push(warning))) rows += batch.length;
    });
    const waiting = outboxRows(paths);
    const detail = `${periods.length} months of usage streams in Redis (${prefix}usage:YYYY-MM), ${rows} rows in ${period}${skipped.length ? `, ${skipped.length} invalid rows skipped` : ""}`;
    checks.push(
      waiting === 0
        ? { name: "usage", status: "ok", detail }
        : {
            name: "usage",
            status: "warn",
            detail: `${detail}; ${waiting} rows wait in ${outboxFile(paths)} for Redis (a running server settles them every 2 s; the balances do not show them yet)`,
          },
    );
  } catch (error) {
    checks.push({ name: "usage", status: "error", detail: messageOf(error) });
  }

  if (metadata === undefined || periods === undefined) {
    checks.push({ name: "balances", status: "error", detail: "not read: the metadata or usage check above failed" });
    return checks;
  }
  const agents = metadata?.agents ?? [];
  const months = [...new Set([...periods, period])];
  // The totals the ledger bills against (each agent's month hash), as a balance reads them.
  const credits = new RedisCreditStore(redis, { prefix });
  try {
    const totals: BalanceTotals = { agents: agents.length, period, periodCredits: 0, lifetimeCredits: 0 };
    for (const month of months) {
      const used = await asker.ask(() =>
        Promise.all(agents.map(async (agent) => (await credits.balance({ agentId: agent.id, allowance: 0 }, month)).planUsed)),
      );
      const sum = used.reduce((total, credits) => total + credits, 0);
      totals.lifetimeCredits += sum;
      if (month === period) totals.periodCredits = sum;
    }
    checks.push(balancesCheck(totals));
  } catch (error) {
    checks.push({ name: "balances", status: "error", detail: messageOf(error) });
  } finally {
    credits.close();
  }
  return checks;
}

/** Connected, or why not, within about the time a start would wait (the connection's own timeouts can add up on a hung server). */
async function connectWithin(state: StateSettings, location: string): Promise<Redis | string> {
  const timeoutMs = Math.max(1000, state.commandTimeoutMs) + state.commandTimeoutMs;
  const opening = openRedis({ url: state.url ?? "", commandTimeoutMs: state.commandTimeoutMs });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`Redis at ${location} did not answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    const outcome = await Promise.race([opening, late]);
    // Answered after the doctor gave up: close it, so nothing keeps the process alive.
    if (typeof outcome === "string")
      opening.then(
        (redis) => redis.disconnect(),
        () => undefined,
      );
    return outcome;
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    return `Redis at ${location} cannot be reached (${messageOf(cause ?? error)})`;
  } finally {
    clearTimeout(timer);
  }
}

/** The rows a Redis home's servers could not settle yet (the outbox open-state.ts gives each instance). */
function outboxFile(paths: HomePaths): string {
  return path.join(paths.dataDir, "usage-outbox.jsonl");
}

function outboxRows(paths: HomePaths): number {
  const file = outboxFile(paths);
  if (!existsSync(file)) return 0;
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "").length;
}

function monthOf(period: string): UsageRange {
  const year = Number(period.slice(0, 4));
  const month = Number(period.slice(5, 7));
  return { since: Date.UTC(year, month - 1, 1), until: Date.UTC(year, month, 1) };
}
