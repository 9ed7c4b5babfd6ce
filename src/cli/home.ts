// Opening the gw home from a command. Commands that create something (agents, keys, providers,
// routes, plans) initialise a missing home, as `gw init` would, since `gw keys create` on a fresh
// machine is the natural first step. Commands that only read or remove ask for `gw init` instead.
// The Redis modules (ioredis) are imported only for a home whose state is on Redis: the embedded
// home, the common case, would pay their loading at every command's start for nothing.
import { existsSync } from "node:fs";
import type { Redis } from "ioredis";
import { readBootstrap } from "../config/bootstrap-sections.js";
import type { StateSettings } from "../config/config-schema.js";
import { initHome, isInitialised } from "../config/init-home.js";
import { type HomePaths, homePaths, resolveHome } from "../config/paths.js";
import { type MetadataRecords, MetadataStore } from "../store/metadata-store.js";
import type { MetadataData } from "../store/records.js";
import { isRedisFailure } from "../store/state-failure.js";
import { EmbeddedUsageHistory, type UsageHistory } from "../store/usage-history.js";
import { CliError } from "./cli-error.js";

export interface HomeOptions {
  /** Initialise the home when it has no config yet. */
  create?: boolean;
}

export async function openHome(homeFlag: string | undefined, options: HomeOptions = {}): Promise<HomePaths> {
  const home = resolveHome(homeFlag);
  if (options.create) await ensureHome(home);
  else if (!isInitialised(home)) throw new CliError(`${home} is not a gw home (no config.json): run \`gw init\` first, or pass --home`);
  return homePaths(home);
}

/**
 * Initialise the home unless its config and metadata are both there (initHome is safe in parallel).
 * A home whose state is in Redis keeps its agents and keys there: it has no metadata file to make.
 */
async function ensureHome(home: string): Promise<void> {
  const paths = homePaths(home);
  if (isInitialised(home) && (existsSync(paths.metadata) || stateOf(paths).driver === "redis")) return;
  await initHome(home);
}

/**
 * Where the home's state is, from its config's local sections alone: an instance's config.json on a
 * Redis state may hold only `server` and `state`, the rest being the document in Redis (§21).
 */
function stateOf(paths: HomePaths): StateSettings {
  return readBootstrap(paths.config).state;
}

/**
 * Run `work` with the agents and keys open, and close them afterwards: this home's metadata file,
 * or, when its config puts the state in Redis, the document every instance reads (a change
 * reaches every instance at once).
 */
export async function withMetadata<T>(paths: HomePaths, work: (store: MetadataRecords) => Promise<T>): Promise<T> {
  const state = stateOf(paths);
  if (state.driver === "redis") return withRedisMetadata(state, work);
  const store = await MetadataStore.open(paths.metadata);
  try {
    return await work(store);
  } finally {
    store.close();
  }
}

async function withRedisMetadata<T>(state: StateSettings, work: (store: MetadataRecords) => Promise<T>): Promise<T> {
  return withRedis(state, { unreachable: "nothing was changed" }, async (redis) => {
    const { RedisMetadataStore } = await import("../store/redis-metadata-store.js");
    const store = await RedisMetadataStore.open(redis, redis, { prefix: state.prefix, create: true });
    try {
      return await work(store);
    } finally {
      store.close();
    }
  });
}

/**
 * Run a report with the agents and keys and the usage history open, and close them afterwards:
 * this home's metadata file and usage log, or, when its config puts the state in Redis, the
 * shared document and the usage streams every instance writes (one connection).
 */
export async function withUsageHistory<T>(paths: HomePaths, work: (metadata: MetadataData, history: UsageHistory) => Promise<T>): Promise<T> {
  const state = stateOf(paths);
  if (state.driver !== "redis") {
    const metadata = await withMetadata(paths, async (store) => store.data);
    return work(metadata, new EmbeddedUsageHistory(paths.usageDir));
  }
  return withRedis(state, { unreachable: "no report was made", failing: "the report is not complete" }, async (redis) => {
    const [{ RedisMetadataStore }, { RedisUsageHistory }] = await Promise.all([
      import("../store/redis-metadata-store.js"),
      import("../store/redis-usage-history.js"),
    ]);
    const store = await RedisMetadataStore.open(redis, redis, { prefix: state.prefix, create: true });
    const metadata = store.data;
    store.close();
    return work(metadata, new RedisUsageHistory(redis, state.prefix));
  });
}

/**
 * One connection to the home's Redis for `work`, closed after. Redis unreachable is a CliError
 * naming it (password hidden) and saying `unreachable`; Redis failing during `work` too when
 * `failing` says what that means (a change whose reply was lost may have been made: no wording).
 */
async function withRedis<T>(state: StateSettings, outcome: { unreachable: string; failing?: string }, work: (redis: Redis) => Promise<T>): Promise<T> {
  if (state.url === undefined) throw new CliError("state.url is required for the redis driver");
  const { openRedis, redactedUrl } = await import("../store/redis-connection.js");
  let redis: Redis;
  try {
    redis = await openRedis({ url: state.url, commandTimeoutMs: state.commandTimeoutMs });
  } catch (error) {
    throw new CliError(`${error instanceof Error ? error.message : String(error)}; ${outcome.unreachable}`);
  }
  try {
    return await work(redis);
  } catch (error) {
    if (outcome.failing === undefined || !isRedisFailure(error)) throw error;
    throw new CliError(`Redis at ${redactedUrl(state.url)} failed (${error.message}); ${outcome.failing}`);
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}
