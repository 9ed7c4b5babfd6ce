// Batches (the Batch API run by gw, docs/decisions.md §23) as a port: each batch's record in
// OpenAI's terms, and the result of each of its lines, recorded once as the line is answered, so
// a batch resumes after a restart without running or billing a line twice. The batch runner
// (gateway/batches/) claims a batch before working it, as the video poller claims a job: two
// instances never work one batch at once, and a batch whose instance died is taken by another
// once its claim's lease ends. Two implementations: this home's (LocalBatchStore, files under
// `data/batches/`) and Redis's (RedisBatchStore, shared by several `gw serve` instances).
import { monotonicFactory } from "ulid";
import type { JobClaim } from "./job-claims.js";

export type { JobClaim };

export type BatchStatus = "validating" | "failed" | "in_progress" | "finalizing" | "completed" | "expired" | "cancelling" | "cancelled";

export const ENDED_BATCH_STATUSES: ReadonlySet<BatchStatus> = new Set(["failed", "completed", "expired", "cancelled"]);

export const BATCH_STATUSES: readonly BatchStatus[] = ["validating", "failed", "in_progress", "finalizing", "completed", "expired", "cancelling", "cancelled"];

/** One problem found in the input file (OpenAI's batch `errors.data[]`); `line` counts from 1. */
export interface BatchInputError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

export interface BatchRecord {
  /** `batch_` and a ULID: unguessable, in creation order. */
  id: string;
  agentId: string;
  /** The key that created it: its model patterns, budget and rate limit apply to every line. */
  keyId: string;
  keyPrefix: string;
  /** `/v1/chat/completions`, `/v1/responses`, `/v1/embeddings` or `/v1/messages`. */
  endpoint: string;
  inputFileId: string;
  completionWindow: string;
  metadata: Record<string, string> | null;
  status: BatchStatus;
  /** Unix seconds, as OpenAI's batch object has them. */
  createdAt: number;
  expiresAt: number;
  inProgressAt?: number;
  finalizingAt?: number;
  completedAt?: number;
  failedAt?: number;
  expiredAt?: number;
  cancellingAt?: number;
  cancelledAt?: number;
  /** Lines in the input; lines answered (2xx) and lines that failed so far. */
  requestCounts: { total: number; completed: number; failed: number };
  /** Why the input was refused (status `failed` before any line ran). */
  errors?: BatchInputError[];
  outputFileId?: string;
  errorFileId?: string;
  /** Lines run at once when it was created: a restart looks this far past the answered lines for lines billed but unrecorded. */
  concurrency: number;
  /** The create request's tags (`x-gw-tags`, `metadata` pairs), on every line's usage row (docs/decisions.md §24). */
  tags?: readonly string[];
}

/** A line's outcome, recorded once: the JSONL line written to the output file (ok) or to the error file. */
export interface BatchLineResult {
  /** The line's position in the input file, from 0. */
  index: number;
  ok: boolean;
  /** Exactly the line the output or error file gets (no newline). */
  line: string;
}

const BATCH_ID = /^batch_[0-9A-HJKMNP-TV-Z]{26}$/;
const nextUlid = monotonicFactory();

export function newBatchId(now: number): string {
  return `batch_${nextUlid(now)}`;
}

/** Only these ids are looked up or become file names and keys. */
export function isBatchId(value: string): boolean {
  return BATCH_ID.test(value);
}

export interface BatchRecords {
  create(batch: BatchRecord): Promise<void>;
  /** undefined when there is none (or the id is not one gw makes). */
  get(id: string): Promise<BatchRecord | undefined>;
  /** The agent's batches newest first, after the batch `after` (OpenAI's cursor); `hasMore` when more follow. */
  list(agentId: string, options: { after?: string; limit: number }): Promise<{ batches: BatchRecord[]; hasMore: boolean }>;
  /** Batches that have not ended, oldest first (what the runner works). */
  active(): Promise<BatchRecord[]>;
  /**
   * Apply a change (a field set to undefined is removed) and persist it; the new record is
   * returned. Under a claim, written only while the claim is held (BatchClaimLostError
   * otherwise) and only to a batch that has not ended (BatchEndedError). `check` sees the record
   * the change applies to and throws to refuse it, with no other change between the two (a
   * client's cancel, made without a claim, refuses a batch that has ended meanwhile).
   */
  update(id: string, change: Partial<BatchRecord>, claim?: JobClaim, check?: (current: BatchRecord) => void): Promise<BatchRecord>;
  /**
   * Record a line's result and count it in `requestCounts` (completed when ok, else failed), in
   * one step, under the claim (BatchClaimLostError when it is no longer held) and only to a batch
   * that has not ended (BatchEndedError). False, and nothing counted, when a result for that line
   * was recorded before.
   */
  addResult(id: string, result: BatchLineResult, claim: JobClaim): Promise<boolean>;
  /** The results recorded so far, in the order they were recorded; read in chunks, never all at once. */
  results(id: string): AsyncIterable<BatchLineResult>;
  /** Forget the results (the output files are stored); the record stays. */
  dropResults(id: string): Promise<void>;
  /** Claim a batch for `ttlMs`; null while someone holds it. */
  claim(id: string, ttlMs: number): Promise<JobClaim | null>;
  /** How many batches are in each state (the metrics). */
  countByStatus(): Promise<Map<BatchStatus, number>>;
}

/** The record with a change applied: a field set to undefined is removed. */
export function applyBatchChange(current: BatchRecord, change: Partial<BatchRecord>): BatchRecord {
  const next: BatchRecord = { ...current, ...change };
  for (const [key, value] of Object.entries(change)) if (value === undefined) delete (next as unknown as Record<string, unknown>)[key];
  return next;
}

/** A change under a claim that is no longer held was not written: whoever made it must stop working the batch. */
export class BatchClaimLostError extends Error {
  constructor(readonly batchId: string) {
    super(`the claim on batch ${batchId} is no longer held (its lease ran out); the change was not written`);
    this.name = "BatchClaimLostError";
  }
}

/** A change under a claim found the batch already ended: not written. */
export class BatchEndedError extends Error {
  constructor(
    readonly batchId: string,
    readonly status: BatchStatus,
  ) {
    super(`batch ${batchId} has already ended (${status}); the change was not written`);
    this.name = "BatchEndedError";
  }
}
