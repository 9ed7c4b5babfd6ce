// What the storage service and its upload sessions share: the blob store, the file state (the
// index and quotas, this home's or shared: store/file-state.ts), the clock, the current settings,
// and the quota and operation bookkeeping.
import type { BlobStore } from "../../blobs/blob-store.js";
import { blobKey } from "../../blobs/blob-store.js";
import type { StorageSettings } from "../../config/config-schema.js";
import type { StorageOperation } from "../../store/file-operations-log.js";
import type { FileRecord } from "../../store/file-records.js";
import type { FileStateRecords } from "../../store/file-state.js";
import { periodOf } from "../../store/usage-log.js";
import { StorageOperationsExceededError } from "./storage-errors.js";

/** The plan limits storage reads. */
export interface StorageLimits {
  storageBytes: number;
  storageOperationsPerPeriod: number;
}

export interface StorageLogger {
  warn(message: string): void;
  /** The server's logger has it (it names the request); a logger without it gets a warning. */
  error?(error: unknown, requestId?: string): void;
}

export interface StorageContext {
  files: FileStateRecords;
  blobs: BlobStore;
  settings: () => StorageSettings;
  /** Milliseconds since the epoch; injectable so link expiry can be tested without waiting. */
  now: () => number;
  logger: StorageLogger;
}

/** A counted operation (upload, presigned-upload, delete) in flight: committed once, or released. */
export interface OperationSlot {
  commit(operation: StorageOperation, fileId: string): Promise<void>;
  release(): Promise<void>;
}

/**
 * Take one of the period's operations for the agent, counting those still in flight (on every
 * instance), so parallel requests cannot pass the limit together. 429 when none is left.
 */
export async function takeOperation(context: StorageContext, agentId: string, limits: StorageLimits): Promise<OperationSlot> {
  const now = new Date(context.now());
  const period = periodOf(now);
  const ticket = await context.files.takeOperation(agentId, period, limits.storageOperationsPerPeriod);
  if (!ticket) {
    const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    throw new StorageOperationsExceededError(
      limits.storageOperationsPerPeriod,
      period,
      Math.max(1, Math.ceil((next - now.getTime()) / 1000)),
      new Date(next).toISOString().slice(0, 10),
    );
  }
  return {
    commit: (operation, fileId) => ticket.commit({ time: new Date(context.now()).toISOString(), agent: agentId, op: operation, file: fileId }),
    release: () => ticket.release(),
  };
}

export function blobKeyOf(record: Pick<FileRecord, "agentId" | "id">): string {
  return blobKey(record.agentId, record.id);
}

/** Remove a file's blob and record, logging (not throwing) what fails: used on cleanup paths. */
export async function discardFile(context: StorageContext, record: FileRecord): Promise<void> {
  await discardBlob(context, blobKeyOf(record));
  await context.files.remove(record).catch((error: unknown) => context.logger.warn(`storage: could not remove record ${record.id}: ${String(error)}`));
}

/** Remove a blob, logging (not throwing) what fails: a cleanup must not fail what it cleans up after. */
export async function discardBlob(context: StorageContext, key: string): Promise<void> {
  await context.blobs.remove(key).catch((error: unknown) => context.logger.warn(`storage: could not remove blob ${key}: ${String(error)}`));
}
