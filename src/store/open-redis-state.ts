// The state on Redis (docs/decisions.md §21): every port of StateStores on one Redis shared by
// several `gw serve` instances, each failing as a StateStoreFailure. Loaded by open-state.ts only
// when the config chooses the redis driver.
import type { Redis } from "ioredis";
import type { StateSettings } from "../config/config-schema.js";
import type { HomePaths } from "../config/paths.js";
import { RedisAuditTrail } from "./audit-trail.js";
import type { StateLog, StateStores } from "./open-state.js";
import { RedisBatchStore } from "./redis-batches.js";
import { openRedis } from "./redis-connection.js";
import { RedisCreditStore } from "./redis-credit-store.js";
import { RedisFileState } from "./redis-file-state.js";
import { RedisMetadataStore } from "./redis-metadata-store.js";
import { RedisProjectStore } from "./redis-project-store.js";
import { RedisRateBuckets } from "./redis-rate-buckets.js";
import { RedisResponseCache } from "./redis-response-cache.js";
import { RedisResponseStore } from "./redis-response-store.js";
import { RedisUsageHistory } from "./redis-usage-history.js";
import { RedisVideoJobStore } from "./redis-video-jobs.js";
import { SettleOutbox } from "./settle-outbox.js";
import { reportingRedisFailures } from "./state-failure.js";

export async function openRedisState(settings: StateSettings, paths: HomePaths, log: StateLog): Promise<StateStores> {
  const { prefix, url } = settings;
  // The schema refuses a redis driver without one.
  if (url === undefined) throw new Error("state.url is required for the redis driver");
  const connection = { url, commandTimeoutMs: settings.commandTimeoutMs };
  const connections: Redis[] = [];
  try {
    const redis = await openRedis(connection);
    connections.push(redis);
    // SUBSCRIBE takes a connection for itself: key and config changes arrive on it.
    const subscriber = await openRedis(connection);
    connections.push(subscriber);
    const warn = (what: string) => (error: unknown) => log.warn(`${what} failed: ${error instanceof Error ? error.message : String(error)}`);
    // An empty Redis (or prefix) is a new deployment, as an uninitialised home is: it starts with no agents or keys.
    const metadata = await RedisMetadataStore.open(redis, subscriber, { prefix, create: true });
    const credits = new RedisCreditStore(redis, { prefix, onError: warn("renewing credit holds in Redis") });
    // Rows whose settle found Redis failing wait here, and rows a crash left are sent now.
    const outbox = new SettleOutbox(reportingRedisFailures(credits, "credits"), `${paths.dataDir}/usage-outbox.jsonl`, log);
    void outbox.replay();
    return {
      driver: "redis",
      metadata: reportingRedisFailures(metadata, "metadata"),
      credits: outbox,
      rates: reportingRedisFailures(new RedisRateBuckets(redis, { prefix, onError: warn("counting spent tokens in Redis") }), "rates"),
      responses: reportingRedisFailures(new RedisResponseStore(redis, prefix), "responses"),
      responseCache: reportingRedisFailures(new RedisResponseCache(redis, prefix), "responseCache"),
      projects: reportingRedisFailures(new RedisProjectStore(redis, prefix), "projects"),
      videoJobs: reportingRedisFailures(new RedisVideoJobStore(redis, prefix), "videoJobs"),
      batches: reportingRedisFailures(new RedisBatchStore(redis, prefix), "batches"),
      files: reportingRedisFailures(new RedisFileState(redis, prefix), "files"),
      audit: reportingRedisFailures(new RedisAuditTrail(redis, prefix), "audit"),
      history: reportingRedisFailures(new RedisUsageHistory(redis, prefix), "history"),
      async ping() {
        await redis.ping();
      },
      async close() {
        metadata.close();
        await outbox.close();
        credits.close();
        await Promise.all(connections.map((connection) => connection.quit().catch(() => connection.disconnect())));
      },
    };
  } catch (error) {
    for (const opened of connections) opened.disconnect();
    throw error;
  }
}
