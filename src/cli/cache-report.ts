// `gw cache stats` and `gw cache clear`: the home's response cache (docs/decisions.md §22), opened
// where its servers keep it: this home's `data/cache` folder, or, when the config puts the state
// in Redis, the entries every instance shares. Either works while `gw serve` runs: the embedded
// cache is files, and a server whose entry file was removed answers that request as a miss.
import path from "node:path";
import type { Redis } from "ioredis";
import { readBootstrap } from "../config/bootstrap-sections.js";
import type { StateSettings } from "../config/config-schema.js";
import type { HomePaths } from "../config/paths.js";
import { LocalResponseCache } from "../store/local-response-cache.js";
import { findAgent } from "../store/provisioning.js";
import type { AgentRecord, MetadataData } from "../store/records.js";
import type { CacheTotals, ResponseCacheStore } from "../store/response-cache.js";
import { isRedisFailure } from "../store/state-failure.js";
import { roundedSize } from "../text/byte-sizes.js";
import { CliError } from "./cli-error.js";
import { withMetadata } from "./home.js";

export interface CacheAgent {
  name: string;
  id: string;
}

/** `gw cache stats --json`: the whole cache, its bound, and the agent's part when one was named. */
export interface CacheStats extends CacheTotals {
  maxBytes: number;
  agent?: CacheAgent & CacheTotals;
}

/** `gw cache clear --json`: the live entries removed (an entry whose lifetime had ended goes uncounted). */
export interface CacheCleared {
  removed: CacheTotals;
  agent?: CacheAgent;
}

/** What a failure leaves done, for its message: "nothing was removed". */
type Outcome = string;

/**
 * Run `work` with the home's response cache open and the named agent (a name or an id) found, and
 * close them after. An unknown agent is an error; so is a Redis that cannot be reached or fails.
 */
export async function withResponseCache<T>(
  paths: HomePaths,
  agentName: string | undefined,
  outcome: Outcome,
  work: (cache: ResponseCacheStore, agent: CacheAgent | undefined) => Promise<T>,
): Promise<T> {
  const state = readBootstrap(paths.config).state;
  if (state.driver === "redis") return withRedisCache(state, agentName, outcome, work);
  const agent = agentName === undefined ? undefined : agentNamed(await withMetadata(paths, async (store) => store.data), agentName);
  const cache = await LocalResponseCache.open(path.join(paths.dataDir, "cache"));
  try {
    return await work(cache, agent);
  } finally {
    await cache.close();
  }
}

async function withRedisCache<T>(
  state: StateSettings,
  agentName: string | undefined,
  outcome: Outcome,
  work: (cache: ResponseCacheStore, agent: CacheAgent | undefined) => Promise<T>,
): Promise<T> {
  if (state.url === undefined) throw new CliError("state.url is required for the redis driver");
  // Imported here: only a home on Redis needs ioredis, which slows every start that loads it.
  const [{ openRedis, redactedUrl }, { RedisMetadataStore }, { RedisResponseCache }] = await Promise.all([
    import("../store/redis-connection.js"),
    import("../store/redis-metadata-store.js"),
    import("../store/redis-response-cache.js"),
  ]);
  let redis: Redis;
  try {
    redis = await openRedis({ url: state.url, commandTimeoutMs: state.commandTimeoutMs });
  } catch (error) {
    throw new CliError(`${error instanceof Error ? error.message : String(error)}; ${outcome}`);
  }
  try {
    // No document yet: a deployment with no agents, as an uninitialised home.
    const metadata = await RedisMetadataStore.peek(redis, state.prefix);
    const agent = agentName === undefined ? undefined : agentNamed(metadata, agentName);
    return await work(new RedisResponseCache(redis, state.prefix), agent);
  } catch (error) {
    if (!isRedisFailure(error)) throw error;
    throw new CliError(`Redis at ${redactedUrl(state.url)} failed (${error.message}); ${outcome}`);
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

function agentNamed(metadata: MetadataData | null, name: string): CacheAgent {
  const agent: AgentRecord | undefined = metadata ? findAgent(metadata, name) : undefined;
  if (!agent) throw new CliError(`no agent "${name}"`);
  return { name: agent.name, id: agent.id };
}

/** `12 entries, 340 KB` */
export function describeTotals(totals: CacheTotals): string {
  return `${totals.entries.toLocaleString("en-US")} ${totals.entries === 1 ? "entry" : "entries"}, ${roundedSize(totals.bytes)}`;
}
