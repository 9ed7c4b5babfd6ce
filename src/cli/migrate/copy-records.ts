// The small records of a home into Redis, each as it is (ids, hashes, times), each step safe to run
// again: agents and keys (added or replaced by id in the shared document), projects, video jobs
// (with the reference photo a job still waiting needs, and its kept credit hold) and stored
// responses still within their retention.
import { existsSync, readdirSync } from "node:fs";
import { type BatchRecord, type BatchRecords, ENDED_BATCH_STATUSES } from "../../store/batch-records.js";
import type { LocalBatchStore } from "../../store/local-batches.js";
import type { ProjectStore } from "../../store/project-records.js";
import type { MetadataData } from "../../store/records.js";
import type { RedisCreditStore } from "../../store/redis-credit-store.js";
import type { RedisMetadataStore } from "../../store/redis-metadata-store.js";
import type { RedisProjectStore } from "../../store/redis-project-store.js";
import type { RedisResponseStore } from "../../store/redis-response-store.js";
import type { RedisVideoJobStore } from "../../store/redis-video-jobs.js";
import type { FileResponseStore } from "../../store/response-records.js";
import { TERMINAL_STATUSES, type VideoJobStore } from "../../store/video-jobs.js";
import { CliError } from "../cli-error.js";

/** Agents and keys by id. An agent of the same name but another id in Redis is another deployment's: refused. */
export async function copyMetadata(source: MetadataData, target: RedisMetadataStore): Promise<{ agents: number; keys: number }> {
  await target.mutate((data) => {
    for (const agent of source.agents) {
      const clash = data.agents.find((existing) => existing.name === agent.name && existing.id !== agent.id);
      if (clash)
        throw new CliError(
          `Redis already has an agent named ${agent.name} (another id): this prefix holds another deployment's agents; choose another --prefix`,
        );
      replaceById(data.agents, agent);
    }
    for (const key of source.keys) replaceById(data.keys, key);
    if (source.adminTokens?.length) {
      data.adminTokens ??= [];
      for (const token of source.adminTokens) replaceById(data.adminTokens, token);
    }
  });
  return { agents: source.agents.length, keys: source.keys.length };
}

function replaceById<T extends { id: string }>(list: T[], item: T): void {
  const index = list.findIndex((existing) => existing.id === item.id);
  if (index === -1) list.push(structuredClone(item));
  else list[index] = structuredClone(item);
}

/** Each agent that has a projects document (`<agent id>.json`): reading it creates nothing. */
export async function copyProjects(directory: string, source: ProjectStore, target: RedisProjectStore): Promise<number> {
  let copied = 0;
  for (const name of listNames(directory, /^([A-Za-z0-9_-]{1,64})\.json$/)) {
    const projects = await source.list(name);
    await target.importProjects(name, projects);
    copied += projects.length;
  }
  return copied;
}

/**
 * Jobs not yet in Redis are created there; a job still running keeps its credit hold under its id
 * (as a server's start would take it again), so its credits stay held until it ends.
 */
export async function copyVideoJobs(
  directory: string,
  source: VideoJobStore,
  target: RedisVideoJobStore,
  credits: RedisCreditStore,
): Promise<{ jobs: number; running: number }> {
  let jobs = 0;
  let running = 0;
  for (const id of listNames(directory, /^(vid_[0-9A-Z]{26})\.json$/)) {
    const job = await source.get(id);
    if (!job) continue;
    const active = !TERMINAL_STATUSES.has(job.status);
    if (!(await target.get(id))) await target.create(job, active ? await source.readImage(id) : undefined);
    if (active) {
      await credits.keepUnchecked(job.id, job.agentId, job.estimateCredits, job.keyPrefix);
      running += 1;
    }
    jobs += 1;
  }
  return { jobs, running };
}

/**
 * Every batch, with the results of those still running (they resume on the instances where they
 * stopped). A batch already in Redis is left as it is.
 */
export async function copyBatches(source: LocalBatchStore, target: BatchRecords): Promise<{ batches: number; running: number }> {
  let batches = 0;
  let running = 0;
  const copy = async (batch: BatchRecord) => {
    batches += 1;
    if (await target.get(batch.id)) return;
    const active = !ENDED_BATCH_STATUSES.has(batch.status);
    // The counts follow the results as they are recorded again.
    await target.create(active ? { ...batch, requestCounts: { ...batch.requestCounts, completed: 0, failed: 0 } } : batch);
    if (!active) return;
    running += 1;
    const claim = await target.claim(batch.id, 60_000);
    if (!claim) throw new CliError(`batch ${batch.id} is claimed in Redis by a running instance: stop the instances and run gw migrate again`);
    try {
      for await (const result of source.results(batch.id)) await target.addResult(batch.id, result, claim);
    } finally {
      await claim.release();
    }
  };
  for (const batch of source.all()) await copy(batch);
  return { batches, running };
}

/** Responses created within `retentionDays` (older ones the servers would prune at once). */
export async function copyResponses(
  directory: string,
  source: FileResponseStore,
  target: RedisResponseStore,
  retentionDays: number,
  nowSeconds: number,
): Promise<{ copied: number; expired: number }> {
  const oldest = nowSeconds - retentionDays * 24 * 3600;
  let copied = 0;
  let expired = 0;
  for (const id of listNames(directory, /^(resp_[0-9a-f]{48})\.json$/)) {
    const record = await source.get(id);
    if (!record) continue;
    if (record.createdAt < oldest) {
      expired += 1;
      continue;
    }
    // The creation time goes with it: retention counts from there, as it did in the home.
    await target.save(record);
    copied += 1;
  }
  return { copied, expired };
}

/** The first group of each matching file name in a folder, sorted; none when the folder is missing. */
function listNames(directory: string, pattern: RegExp): string[] {
  if (!existsSync(directory)) return [];
  const names: string[] = [];
  for (const name of readdirSync(directory).sort()) {
    const match = pattern.exec(name)?.[1];
    if (match !== undefined) names.push(match);
  }
  return names;
}
