// `gw migrate --to redis`: an embedded home's state copied into Redis (and its blobs into a shared
// store), then the home switched to it (docs/decisions.md §21). The home's serve lock is held from
// the first check to the end, so no `gw serve` starts on it mid-copy. Every step writes what is
// already there again without change, so a run cut short is simply run again. The home's
// config.json is rewritten last, and only once the balances Redis computed equal the home's: until
// then the home serves from its own files, which are never changed or deleted.
import type { Redis } from "ioredis";
import type { BlobStore } from "../../blobs/blob-store.js";
import { createBlobStore } from "../../blobs/create-blob-store.js";
import { withoutLocalSections } from "../../config/bootstrap-sections.js";
import { stateSchema } from "../../config/config-schema.js";
import { loadConfigFile, readRawConfig } from "../../config/load-config.js";
import type { HomePaths } from "../../config/paths.js";
import { writeFileAtomic } from "../../store/atomic-write.js";
import { LocalBatchStore } from "../../store/local-batches.js";
import { MetadataStore } from "../../store/metadata-store.js";
import { ProjectStore } from "../../store/project-records.js";
import { RedisBatchStore } from "../../store/redis-batches.js";
import { RedisConfigStore } from "../../store/redis-config-store.js";
import { openRedis, redactedUrl } from "../../store/redis-connection.js";
import { RedisCreditStore } from "../../store/redis-credit-store.js";
import { RedisFileState } from "../../store/redis-file-state.js";
import { RedisMetadataStore } from "../../store/redis-metadata-store.js";
import { RedisProjectStore } from "../../store/redis-project-store.js";
import { RedisResponseStore } from "../../store/redis-response-store.js";
import { RedisVideoJobStore } from "../../store/redis-video-jobs.js";
import { FileResponseStore } from "../../store/response-records.js";
import { ServeLockedError, takeServeLock } from "../../store/serve-lock.js";
import { periodOf } from "../../store/usage-log.js";
import { VideoJobStore } from "../../store/video-jobs.js";
import { CliError } from "../cli-error.js";
import { copyFiles, copyOperationCounts } from "./copy-files.js";
import { copyBatches, copyMetadata, copyProjects, copyResponses, copyVideoJobs } from "./copy-records.js";
import { copyUsage, redisTotals, sum } from "./copy-usage.js";
import { type MigrateFlags, migrationTarget } from "./migration-target.js";

export interface AgentBalance {
  agent: string;
  name: string;
  /** Credits used this month and over every month, in the home and in Redis. */
  monthBefore: number;
  monthAfter: number;
  lifetimeBefore: number;
  lifetimeAfter: number;
}

export interface MigrationSummary {
  home: string;
  redis: string;
  prefix: string;
  /** Where the files' bytes are now. */
  blobs: string;
  agents: number;
  keys: number;
  usage: { months: Array<{ period: string; rows: number }>; rows: number; skipped: string[] };
  balances: AgentBalance[];
  files: { records: number; bytes: number; blobsCopied: number; blobsPresent: number };
  operations: number;
  projects: number;
  videoJobs: { jobs: number; running: number };
  batches: { batches: number; running: number };
  responses: { copied: number; expired: number };
  notes: string[];
}

export async function migrateHome(paths: HomePaths, flags: MigrateFlags, now = new Date()): Promise<MigrationSummary> {
  const config = loadConfigFile(paths.config);
  if (config.state.driver === "redis")
    throw new CliError(`${paths.home} already keeps its state in Redis (state.driver "redis" in ${paths.config}): there is nothing to migrate`);
  const raw = readRawConfig(paths.config);
  const target = migrationTarget(flags, (raw.storage ?? {}) as Record<string, unknown>, paths);
  const lock = await takeServeLock(paths.dataDir).catch((error: unknown) => {
    if (error instanceof ServeLockedError)
      throw new CliError(`${error.message}: stop it first (gw migrate copies a home no server is changing); nothing was changed`);
    throw error;
  });
  // Closed in reverse order whatever happens: connections, stores, blob stores.
  const opened: Array<() => unknown> = [];
  try {
    const redis = await connect(target.redisUrl, config.state.commandTimeoutMs);
    opened.push(() => redis.quit().catch(() => redis.disconnect()));
    const prefix = target.state.prefix;
    const migratedRaw = { ...raw, state: target.state, storage: target.storage };
    await copyConfig(paths, migratedRaw, target.redisUrl);

    const source = await MetadataStore.open(paths.metadata);
    opened.push(() => source.close());
    const metadata = await RedisMetadataStore.open(redis, redis, { prefix, create: true });
    opened.push(() => metadata.close());
    const { agents, keys } = await copyMetadata(source.data, metadata);

    const credits = new RedisCreditStore(redis, { prefix });
    opened.push(() => credits.close());
    const usage = await copyUsage(paths.usageDir, credits);

    const videoJobs = VideoJobStore.open(`${paths.dataDir}/video-jobs`);
    const projects = await copyProjects(`${paths.dataDir}/projects`, new ProjectStore(`${paths.dataDir}/projects`), new RedisProjectStore(redis, prefix));

    const sourceBlobs = await createBlobStore(config.storage, paths.blobsDir);
    opened.push(() => sourceBlobs.close());
    let targetBlobs: BlobStore | undefined;
    if (target.blobs) {
      targetBlobs = await createBlobStore(target.blobs, paths.blobsDir);
      opened.push(() => targetBlobs?.close());
    }
    const fileState = new RedisFileState(redis, prefix);
    const files = await copyFiles(`${paths.dataDir}/storage`, sourceBlobs, targetBlobs, fileState);
    const operations = await copyOperationCounts(`${paths.dataDir}/storage`, fileState);
    const jobs = await copyVideoJobs(`${paths.dataDir}/video-jobs`, videoJobs, new RedisVideoJobStore(redis, prefix), credits);
    const batches = await copyBatches(await LocalBatchStore.open(`${paths.dataDir}/batches`), new RedisBatchStore(redis, prefix));
    const responses = await copyResponses(
      `${paths.dataDir}/responses`,
      new FileResponseStore(`${paths.dataDir}/responses`),
      new RedisResponseStore(redis, prefix),
      config.responses.retentionDays,
      Math.floor(now.getTime() / 1000),
    );

    const balances = await compareBalances(source.data, usage.before, credits, periodOf(now));
    const summary: MigrationSummary = {
      home: paths.home,
      redis: redactedUrl(target.redisUrl),
      prefix,
      blobs: target.blobs?.label ?? `unchanged (storage.driver ${String(target.storage.driver ?? "fs")})`,
      agents,
      keys,
      usage: { months: usage.months, rows: usage.months.reduce((total, month) => total + month.rows, 0), skipped: usage.skipped },
      balances,
      files: { records: files.records, bytes: files.bytes, blobsCopied: files.blobsCopied, blobsPresent: files.blobsPresent },
      operations,
      projects,
      videoJobs: jobs,
      batches,
      responses,
      notes: [
        ...files.notes,
        `the embedded files in ${paths.dataDir} are kept as they were: delete them once the instances serve from Redis, or keep them to run gw migrate again (with config.json's state set back to embedded)`,
      ],
    };
    // Last: from here on the home serves from Redis.
    writeFileAtomic(paths.config, `${JSON.stringify(migratedRaw, null, 2)}\n`);
    return summary;
  } finally {
    // A close that fails must not hide what the migration did or left undone, nor keep the lock.
    for (const close of opened.reverse())
      await Promise.resolve()
        .then(close)
        .catch(() => undefined);
    lock.release();
  }
}

async function connect(url: string, commandTimeoutMs: number): Promise<Redis> {
  try {
    // A migration sends long scripts and pipelines: more time per command than a request gets.
    return await openRedis({ url, commandTimeoutMs: Math.max(commandTimeoutMs, 10_000) });
  } catch (error) {
    throw new CliError(`${error instanceof Error ? error.message : String(error)}; nothing was changed`);
  }
}

/**
 * The shared config: the home's, without its local sections, seeded into an empty key. One that is
 * there already must be this same document (an earlier run); another is another deployment's.
 */
async function copyConfig(paths: HomePaths, migratedRaw: Record<string, unknown>, redisUrl: string): Promise<void> {
  const state = stateSchema.parse({ ...(migratedRaw.state as object), url: redisUrl });
  const store = await RedisConfigStore.connect({ file: paths.config, raw: migratedRaw, state });
  try {
    const { raw } = await store.load();
    if (JSON.stringify(withoutLocalSections(raw)) !== JSON.stringify(withoutLocalSections(migratedRaw)))
      throw new CliError(
        `${store.label} already holds another config (another deployment's, or this home's config changed since an earlier run): ` +
          "choose another --prefix, or delete that key if it is a stale copy; the home was not changed",
      );
  } finally {
    await store.close();
  }
}

/** Every agent's credits this month and over every month, in the home and in Redis; any difference refuses. */
async function compareBalances(
  metadata: { agents: Array<{ id: string; name: string }>; keys: Array<{ prefix: string; agentId: string }> },
  before: Awaited<ReturnType<typeof copyUsage>>["before"],
  credits: RedisCreditStore,
  period: string,
): Promise<AgentBalance[]> {
  const agentOfKey = new Map(metadata.keys.map((key) => [key.prefix, key.agentId]));
  const after = await redisTotals(credits, before, agentOfKey);
  const names = new Map(metadata.agents.map((agent) => [agent.id, agent.name]));
  const balances: AgentBalance[] = [];
  const differ: string[] = [];
  const agents = new Set([...metadata.agents.map((agent) => agent.id), ...before.agents.keys()]);
  for (const agent of agents) {
    const months = before.agents.get(agent) ?? new Map<string, number>();
    const redisMonths = after.agents.get(agent);
    const balance: AgentBalance = {
      agent,
      name: names.get(agent) ?? agent,
      monthBefore: months.get(period) ?? 0,
      monthAfter: redisMonths?.get(period) ?? 0,
      lifetimeBefore: sum(months),
      lifetimeAfter: sum(redisMonths),
    };
    balances.push(balance);
    const everyMonth = [...months].every(([month, used]) => redisMonths?.get(month) === used);
    if (!everyMonth || balance.lifetimeBefore !== balance.lifetimeAfter) differ.push(`agent ${balance.name} (${agent})`);
  }
  for (const [prefix, months] of before.keys) {
    if (after.keyLifetimes.get(prefix) !== sum(months)) differ.push(`key ${prefix} of agent ${names.get(agentOfKey.get(prefix) ?? "") ?? "?"}`);
  }
  if (differ.length > 0)
    throw new CliError(
      `the credits Redis counts differ from the home's for ${differ.join(", ")}; the home was not switched (it still serves from its own files): ` +
        "check that nothing else writes under this --prefix, and run gw migrate again",
    );
  return balances;
}
