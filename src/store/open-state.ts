// Every kind of state a gw server keeps, chosen once at start: this home's files and memory
// ("embedded", one `gw serve` per home), or one Redis shared by several `gw serve` instances. The
// request path receives these ports and never learns which implementation it has
// (docs/decisions.md §21).
import type { StateSettings } from "../config/config-schema.js";
import type { HomePaths } from "../config/paths.js";
import { type AuditTrail, LocalAuditTrail } from "./audit-trail.js";
import type { BatchRecords } from "./batch-records.js";
import type { CreditStore } from "./credit-store.js";
import type { FileStateRecords } from "./file-state.js";
import { LocalBatchStore } from "./local-batches.js";
import { LocalCreditStore } from "./local-credit-store.js";
import { LocalFileState } from "./local-file-state.js";
import { LocalRateBuckets } from "./local-rate-buckets.js";
import { LocalResponseCache } from "./local-response-cache.js";
import { type MetadataRecords, MetadataStore } from "./metadata-store.js";
import { type ProjectRecords, ProjectStore } from "./project-records.js";
import type { RateLimitBuckets } from "./rate-buckets.js";
import type { ResponseCacheStore } from "./response-cache.js";
import { FileResponseStore, type ResponseStore } from "./response-records.js";
import { EmbeddedUsageHistory, type UsageHistory } from "./usage-history.js";
import { UsageLog } from "./usage-log.js";
import { type VideoJobRecords, VideoJobStore } from "./video-jobs.js";

export interface StateStores {
  readonly driver: StateSettings["driver"];
  readonly metadata: MetadataRecords;
  readonly credits: CreditStore;
  readonly rates: RateLimitBuckets;
  readonly responses: ResponseStore;
  /** The response cache's entries (docs/decisions.md §22). */
  readonly responseCache: ResponseCacheStore;
  readonly projects: ProjectRecords;
  readonly videoJobs: VideoJobRecords;
  /** The Batch API's batches and their lines' results (docs/decisions.md §23). */
  readonly batches: BatchRecords;
  /** Stored files: the storage index, quotas and operation counts. */
  readonly files: FileStateRecords;
  /** The admin API's audit log (docs/decisions.md §25). */
  readonly audit: AuditTrail;
  /** Every usage row written, for reports (the admin API's): this home's log, or the Redis streams. */
  readonly history: UsageHistory;
  /** This home's usage log, which the embedded credit store writes (undefined on Redis, whose rows are in Redis). */
  readonly usageLog?: UsageLog;
  /** Resolves when the shared store answers (within its command timeout); at once for the embedded state. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface StateLog {
  warn(message: string): void;
  info(message: string): void;
}

export function openState(settings: StateSettings, paths: HomePaths, log: StateLog): Promise<StateStores> {
  // ioredis and the Redis ports load only for a Redis state: the embedded default never pays for them.
  return settings.driver === "redis"
    ? import("./open-redis-state.js").then(({ openRedisState }) => openRedisState(settings, paths, log))
    : openEmbeddedState(paths, log);
}

async function openEmbeddedState(paths: HomePaths, log: StateLog): Promise<StateStores> {
  // First: a stored-file record that does not parse refuses the start before anything else is open.
  const files = await LocalFileState.open(`${paths.dataDir}/storage`);
  // Holds nothing open once scanned: nothing to close should a later step fail.
  const responseCache = await LocalResponseCache.open(`${paths.dataDir}/cache`);
  // Holds nothing open either; a record that cannot be read refuses the start, naming its file.
  const batches = await LocalBatchStore.open(`${paths.dataDir}/batches`);
  const metadata = await MetadataStore.open(paths.metadata);
  const usageLog = UsageLog.open(paths.usageDir);
  // Rows skipped for invalid credits or agent: billing goes on without them, but say which.
  const shown = usageLog.warnings.slice(0, 20);
  for (const warning of shown) log.warn(warning);
  if (usageLog.warnings.length > shown.length) log.warn(`${usageLog.warnings.length - shown.length} more usage rows skipped (run \`gw usage\` to list them)`);
  // One set of buckets: a hold that counts its request (CreditStore.hold's take) and a request counted alone share them.
  const rates = new LocalRateBuckets();
  return {
    driver: "embedded",
    metadata,
    credits: new LocalCreditStore(usageLog, rates),
    rates,
    responses: new FileResponseStore(`${paths.dataDir}/responses`),
    responseCache,
    projects: new ProjectStore(`${paths.dataDir}/projects`),
    videoJobs: VideoJobStore.open(`${paths.dataDir}/video-jobs`),
    batches,
    files,
    audit: new LocalAuditTrail(`${paths.dataDir}/audit`),
    history: new EmbeddedUsageHistory(paths.usageDir),
    usageLog,
    ping: () => Promise.resolve(),
    async close() {
      metadata.close();
      usageLog.close();
      await Promise.all([files.close(), responseCache.close()]);
    },
  };
}
