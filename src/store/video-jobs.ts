// Video jobs, persisted so they survive a restart. `VideoJobRecords` is the port the video service
// and poller use; the embedded VideoJobStore keeps one JSON document per job,
// `<dir>/<job id>.json`, written atomically (temp file, fsync, rename) on every change, and the
// reference photo a queued job still needs beside it (`<job id>.input`) until the job ends. It is
// the only writer of its directory (one `gw serve` per home); every job is read once at start and
// then answered from memory. Several instances share RedisVideoJobStore instead.
//
// Whoever works a job (submits, polls, downloads, bills it) first claims it for a while and renews
// the claim as it goes: two instances never work the same job at once, and a job whose claimant
// died is taken by another once the claim ends. A change made under a claim is written only while
// that claim is held (fencing) and never to a job that has already ended.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { monotonicFactory } from "ulid";
import { writeFileAtomic } from "./atomic-write.js";
import { type ClaimSlot, type JobClaim, LocalClaims } from "./job-claims.js";
import { StoreError } from "./store-error.js";

export { type ClaimSlot, checkLease, type JobClaim } from "./job-claims.js";

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
  /** The submitting request's tags, for the row written when the job succeeds (docs/decisions.md §24). */
  tags?: readonly string[];
}

const JOB_ID = /^vid_[0-9A-HJKMNP-TV-Z]{26}$/;
const nextUlid = monotonicFactory();

export function isVideoJobId(value: string): boolean {
  return JOB_ID.test(value);
}

export function newVideoJobId(): string {
  return `vid_${nextUlid()}`;
}

/** What the video service and poller need of the jobs' records, embedded or shared. */
export interface VideoJobRecords {
  get(id: string): Promise<VideoJobRecord | undefined>;
  /** How many jobs are in each state (the metrics). */
  countByStatus(): Promise<Map<VideoJobStatus, number>>;
  /** Jobs that are not finished, oldest first. */
  active(): Promise<VideoJobRecord[]>;
  /** An agent's jobs, newest first. */
  list(agentId: string, limit: number): Promise<VideoJobRecord[]>;
  /** A new job, with the reference photo it needs until it ends. */
  create(job: VideoJobRecord, image?: Buffer): Promise<void>;
  /**
   * Apply a change (a field set to undefined is removed) and persist it; the new record is
   * returned. Under a claim the change is written only while the claim is held
   * (VideoJobClaimLostError otherwise) and only to a job that has not ended (VideoJobEndedError).
   * The photo is deleted when the job ends. `check` is given the record the change applies to and
   * throws to refuse it (a cancel refuses a job that has ended meanwhile); no other change comes
   * between the two.
   */
  update(id: string, change: Partial<VideoJobRecord>, claim?: JobClaim, check?: (current: VideoJobRecord) => void): Promise<VideoJobRecord>;
  /** The reference photo of a job that still needs it. */
  readImage(id: string): Promise<Buffer | undefined>;
  /**
   * Claim a job for `ttlMs`; null when someone holds it now, or when `slot` is given and its group
   * already has `limit` claims held. The slot is held, renewed and released with the claim.
   */
  claim(id: string, ttlMs: number, slot?: ClaimSlot): Promise<JobClaim | null>;
}

/** A change under a claim that is no longer held was not written: whoever made it must stop working the job. */
export class VideoJobClaimLostError extends Error {
  constructor(readonly jobId: string) {
    super(`the claim on video job ${jobId} is no longer held (its lease ran out); the change was not written`);
    this.name = "VideoJobClaimLostError";
  }
}

/** A change under a claim found the job already ended (a client cancelled it meanwhile): not written. */
export class VideoJobEndedError extends Error {
  constructor(
    readonly jobId: string,
    readonly status: VideoJobStatus,
  ) {
    super(`video job ${jobId} has already ended (${status}); the change was not written`);
    this.name = "VideoJobEndedError";
  }
}

/** The record with a change applied: a field set to undefined is removed. */
export function applyJobChange(current: VideoJobRecord, change: Partial<VideoJobRecord>): VideoJobRecord {
  const next: VideoJobRecord = { ...current, ...change };
  for (const [key, value] of Object.entries(change)) if (value === undefined) delete (next as unknown as Record<string, unknown>)[key];
  return next;
}

export class VideoJobStore implements VideoJobRecords {
  private readonly jobs = new Map<string, VideoJobRecord>();
  /** The claims on jobs (one process: a Map with expiry is enough). */
  private readonly claims = new LocalClaims();

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

  async get(id: string): Promise<VideoJobRecord | undefined> {
    return this.jobs.get(id);
  }

  async countByStatus(): Promise<Map<VideoJobStatus, number>> {
    const counts = new Map<VideoJobStatus, number>();
    for (const job of this.jobs.values()) counts.set(job.status, (counts.get(job.status) ?? 0) + 1);
    return counts;
  }

  async active(): Promise<VideoJobRecord[]> {
    return [...this.jobs.values()].filter((job) => !TERMINAL_STATUSES.has(job.status)).sort((a, b) => a.id.localeCompare(b.id));
  }

  async list(agentId: string, limit: number): Promise<VideoJobRecord[]> {
    return [...this.jobs.values()]
      .filter((job) => job.agentId === agentId)
      .sort((a, b) => b.id.localeCompare(a.id))
      .slice(0, limit);
  }

  async create(job: VideoJobRecord, image?: Buffer): Promise<void> {
    if (image) writeFileSync(this.inputFile(job.id), image, { mode: 0o600 });
    this.write(job);
  }

  async update(id: string, change: Partial<VideoJobRecord>, claim?: JobClaim, check?: (current: VideoJobRecord) => void): Promise<VideoJobRecord> {
    const current = this.jobs.get(id);
    if (!current) throw new StoreError(`video job ${id} is not in the store`);
    if (claim) {
      if (!this.claims.holds(claim, id)) throw new VideoJobClaimLostError(id);
      if (TERMINAL_STATUSES.has(current.status)) throw new VideoJobEndedError(id, current.status);
    }
    check?.(current);
    const next = applyJobChange(current, change);
    this.write(next);
    if (TERMINAL_STATUSES.has(next.status)) rmSync(this.inputFile(id), { force: true });
    return next;
  }

  async readImage(id: string): Promise<Buffer | undefined> {
    try {
      return readFileSync(this.inputFile(id));
    } catch {
      return undefined;
    }
  }

  async claim(id: string, ttlMs: number, slot?: ClaimSlot): Promise<JobClaim | null> {
    return this.claims.take(id, ttlMs, slot);
  }

  private write(job: VideoJobRecord): void {
    writeFileAtomic(path.join(this.directory, `${job.id}.json`), `${JSON.stringify(job, null, 2)}\n`);
    this.jobs.set(job.id, job);
  }

  private inputFile(id: string): string {
    return path.join(this.directory, `${id}.input`);
  }
}
