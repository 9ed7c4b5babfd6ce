// The storage index and quotas as a port (docs/decisions.md §21): which files each agent has, the
// bytes they use, the bytes uploads in flight hold, the counted operations of a period, and which
// presigned upload is receiving its bytes now. The storage service asks this port and never learns
// whether it is this home's (LocalFileState: records on disk, the index in memory, the operations
// log) or Redis's (RedisFileState, shared by several `gw serve` instances). Every check-and-take
// is one step, so two instances can never pass a quota or an operations limit together.
import type { OperationRow } from "./file-operations-log.js";
import type { FileRecord } from "./file-records.js";

/** An agent's space: `usedBytes` counts ready and pending files; `reservedBytes` uploads in flight. */
export interface FileSpace {
  usedBytes: number;
  reservedBytes: number;
}

/** A grant of quota space: whether it was granted and how many bytes, and the space as it was before. */
export interface ByteGrant extends FileSpace {
  ok: boolean;
  grantedBytes: number;
}

/** One of the period's operations, taken and not yet counted: counted once committed, else given back. */
export interface OperationTicket {
  commit(row: OperationRow): Promise<void>;
  release(): Promise<void>;
}

/** A presigned upload receiving its bytes: one upload per link at a time. */
export interface ReceivingClaim {
  release(): Promise<void>;
}

export interface SaveOptions {
  /** The upload whose granted bytes become this record's: reserved -> used in the same step. */
  grant?: string;
  /** Write only when the record is still there (a delete meanwhile wins): false when it is not. */
  ifPresent?: boolean;
}

/** The embedded state's records as found at start: the storage service recovers them once. */
export interface FileRecovery {
  readonly records: readonly FileRecord[];
  /** Count a record found at start as stored (ready, or pending with a live link). */
  restore(record: FileRecord): void;
  /** The recovery is over: the records found at start are let go. */
  done(): void;
}

/** A cursor over an agent's files in id order (creation order: ids are ULIDs). */
export interface FileCursor {
  /** Start just past this id (it need not be a file that exists); from the first file when absent. */
  after?: string;
  limit: number;
  /** `asc`: oldest first; `desc`: newest first (`after` then reads older files). */
  order: "asc" | "desc";
}

/** How long a grant, an operation taken or a receiving claim outlives an instance that died holding it. */
export const FILE_LEASE_MS = 60 * 60 * 1000;

export interface FileStateRecords {
  /**
   * How much space an upload asks for at a time, at least: 0 (each chunk's bytes, exactly) when a
   * grant costs nothing, more when each is a round trip (the surplus goes back when the file is stored).
   */
  readonly grantStepBytes: number;
  /** The agent's files (ready and pending), newest first; `page` counts from 1. */
  page(agentId: string, page: number, limit: number): Promise<{ records: FileRecord[]; total: number }>;
  /** Up to `limit` of the agent's files (ready and pending) in `order` from the cursor, and whether more follow. */
  listFrom(agentId: string, cursor: FileCursor): Promise<{ records: FileRecord[]; hasMore: boolean }>;
  /** Any agent's ready or pending file by id (signed links name a file but no agent). */
  find(id: string): Promise<FileRecord | undefined>;
  space(agentId: string): Promise<FileSpace>;
  /** Operations counted for the agent in `period` (YYYY-MM). */
  operationCount(agentId: string, period: string): Promise<number>;
  /** Take one of the period's `limit` operations, counting those in flight; null when none is left. */
  takeOperation(agentId: string, period: string, limit: number): Promise<OperationTicket | null>;
  /**
   * Grant the upload `uploadId` between `minBytes` and `maxBytes` more (as much as fits, up to
   * `maxBytes`) against `limitBytes`; refused (ok false, nothing granted) when not even `minBytes` fits.
   */
  grantBytes(agentId: string, uploadId: string, minBytes: number, maxBytes: number, limitBytes: number): Promise<ByteGrant>;
  /** Give back everything granted to the upload; nothing when it holds nothing. */
  returnBytes(agentId: string, uploadId: string): Promise<void>;
  /** Create or replace a record; an `uploading` one is kept but neither listed nor counted. */
  save(record: FileRecord, options?: SaveOptions): Promise<boolean>;
  /** Remove a record; the ready or pending record removed, or undefined when there was none (or it was an upload's intent). */
  remove(record: Pick<FileRecord, "agentId" | "id">): Promise<FileRecord | undefined>;
  /** Claim a presigned upload's link for one upload for up to `ttlMs`; null while another holds it. */
  claimReceiving(id: string, ttlMs: number): Promise<ReceivingClaim | null>;
  /**
   * Take the agent's pending uploads whose link expired before `nowSeconds` and that receive
   * nothing now out of the index (and its counts); the caller discards their bytes and records.
   */
  dropExpiredUploads(agentId: string, nowSeconds: number): Promise<FileRecord[]>;
  /**
   * Up to `limit` upload intents (records still `uploading`) begun more than `olderThanMs` ago:
   * uploads whose instance died mid-way, for the caller to discard with their bytes. The embedded
   * state has none to report: one process aborts its own uploads, and a crash's are recovered at
   * the next start.
   */
  abandonedUploads(olderThanMs: number, limit: number): Promise<FileRecord[]>;
  /** Files and bytes over every agent (the metrics; pending uploads count, as for a quota). */
  totals(): Promise<{ files: number; bytes: number }>;
  /** Embedded only: what start found, for the orphan sweep (Redis's records outlive any one instance). */
  readonly recovery?: FileRecovery;
  close(): Promise<void>;
}
