// Video jobs, persisted so they survive a restart: one JSON document per job,
// `<dir>/<job id>.json`, written atomically (temp file, fsync, rename) on every change, and the
// reference photo a queued job still needs beside it (`<job id>.input`) until the job ends. The
// server is the only writer; every job is read once at start and then answered from memory.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { monotonicFactory } from "ulid";
import { writeFileAtomic } from "./atomic-write.js";
import { StoreError } from "./store-error.js";

export type VideoJobStatus = "QUEUED" | "SUBMITTED" | "SUCCEEDED" | "FAILED" | "CANCELLED";

export const TERMINAL_STATUSES: ReadonlySet<VideoJobStatus> = new Set(["SUCCEEDED", "FAILED", "CANCELLED"]);

export interface VideoJobRecord {
  id: string;
  agentId: string;
  keyPrefix: string;
  /** Public model id, its provider's name and the vendor's model id. */
  model: string;
  provider: string;
  vendorModel: string;
  status: VideoJobStatus;
  queuedAt: string;
  startedAt?: string;
  finishedAt?: string;
  request: {
    prompt: string;
    durationSeconds: number;
    resolution: string;
    ratio: string;
    width: number;
    height: number;
    /** The reference photo, kept in `<id>.input` while the job needs it. */
    image?: { mediaType: string; width: number; height: number };
  };
  projectId: string;
  /** Credits held while the job runs (its estimated cost). */
  estimateCredits: number;
  /** The vendor's task, once submitted. */
  taskId?: string;
  polls: number;
  /** Not polled again before this (ISO 8601): backoff and the vendor's Retry-After. */
  nextPollAt?: string;
  progress?: number;
  error?: string;
  /** The finished clip in the agent's storage, and the link's fixed expiry. */
  result?: { fileId: string; expiresAt: string; durationSeconds: number };
  /** The usage row, named before it is written: a restart finds whether it was. */
  billing?: { rowId: string; credits: number; seconds: number; written: boolean };
}

const JOB_ID = /^vid_[0-9A-HJKMNP-TV-Z]{26}$/;
const nextUlid = monotonicFactory();

export function isVideoJobId(value: string): boolean {
  return JOB_ID.test(value);
}

export function newVideoJobId(): string {
  return `vid_${nextUlid()}`;
}

export class VideoJobStore {
  private readonly jobs = new Map<string, VideoJobRecord>();

  private constructor(readonly directory: string) {}

  /** Read every job; a document that cannot be read refuses to start, naming the file. */
  static open(directory: string): VideoJobStore {
    mkdirSync(directory, { recursive: true });
    const store = new VideoJobStore(directory);
    for (const name of readdirSync(directory)) {
      if (!name.endsWith(".json") || name.startsWith(".")) continue;
      const file = path.join(directory, name);
      let job: VideoJobRecord;
      try {
        job = JSON.parse(readFileSync(file, "utf8")) as VideoJobRecord;
      } catch (error) {
        throw new StoreError(`${file}: not a readable video job (${(error as Error).message}); move it aside to start`);
      }
      if (!isVideoJobId(job.id) || `${job.id}.json` !== name) throw new StoreError(`${file}: not a video job document; move it aside to start`);
      store.jobs.set(job.id, job);
    }
    return store;
  }

  get(id: string): VideoJobRecord | undefined {
    return this.jobs.get(id);
  }

  /** How many jobs are in each state (the metrics). */
  countByStatus(): Map<VideoJobStatus, number> {
    const counts = new Map<VideoJobStatus, number>();
    for (const job of this.jobs.values()) counts.set(job.status, (counts.get(job.status) ?? 0) + 1);
    return counts;
  }

  /** Jobs that are not finished, oldest first. */
  active(): VideoJobRecord[] {
    return [...this.jobs.values()].filter((job) => !TERMINAL_STATUSES.has(job.status)).sort((a, b) => a.id.localeCompare(b.id));
  }

  /** An agent's jobs, newest first. */
  list(agentId: string, limit: number): VideoJobRecord[] {
    return [...this.jobs.values()]
      .filter((job) => job.agentId === agentId)
      .sort((a, b) => b.id.localeCompare(a.id))
      .slice(0, limit);
  }

  create(job: VideoJobRecord, image?: Buffer): void {
    if (image) writeFileSync(this.inputFile(job.id), image, { mode: 0o600 });
    this.write(job);
  }

  /** Apply a change and persist it; the new record is returned. */
  update(id: string, change: Partial<VideoJobRecord>): VideoJobRecord {
    const current = this.jobs.get(id);
    if (!current) throw new StoreError(`video job ${id} is not in the store`);
    const next: VideoJobRecord = { ...current, ...change };
    for (const [key, value] of Object.entries(change)) if (value === undefined) delete (next as unknown as Record<string, unknown>)[key];
    this.write(next);
    if (TERMINAL_STATUSES.has(next.status)) rmSync(this.inputFile(id), { force: true });
    return next;
  }

  /** The reference photo of a job that still needs it. */
  readImage(id: string): Buffer | undefined {
    try {
      return readFileSync(this.inputFile(id));
    } catch {
      return undefined;
    }
  }

  private write(job: VideoJobRecord): void {
    writeFileAtomic(path.join(this.directory, `${job.id}.json`), `${JSON.stringify(job, null, 2)}\n`);
    this.jobs.set(job.id, job);
  }

  private inputFile(id: string): string {
    return path.join(this.directory, `${id}.input`);
  }
}
