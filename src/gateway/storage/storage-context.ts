// What the storage service and its upload sessions share: stores, the in-memory index, the
// clock, the current settings, and the quota and operation bookkeeping.
import type { BlobStore } from "../../blobs/blob-store.js";
import { blobKey } from "../../blobs/blob-store.js";
import type { StorageSettings } from "../../config/config-schema.js";
import type { FileOperationsLog, StorageOperation } from "../../store/file-operations-log.js";
import type { FileRecord, FileRecordStore } from "../../store/file-records.js";
import { periodOf } from "../../store/usage-log.js";
import type { AgentFiles, FileIndex } from "./file-index.js";
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
  records: FileRecordStore;
  blobs: BlobStore;
  operations: FileOperationsLog;
  index: FileIndex;
  settings: () => StorageSettings;
  /** Milliseconds since the epoch; injectable so link expiry can be tested without waiting. */
  now: () => number;
  logger: StorageLogger;
}

/** A counted operation (upload, presigned-upload, delete) in flight: committed once, or released. */
export interface OperationSlot {
  commit(operation: StorageOperation, fileId: string): void;
  release(): void;
}

/**
 * Take one of the period's operations for the agent, counting those still in flight, so parallel
 * requests cannot pass the limit together. 429 when none is left.
 */
export function takeOperation(context: StorageContext, agent: AgentFiles, agentId: string, limits: StorageLimits): OperationSlot {
  const now = new Date(context.now());
  const period = periodOf(now);
  const used = context.operations.count(agentId, period);
  if (used + agent.operationsInFlight >= limits.storageOperationsPerPeriod) {
    const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    throw new StorageOperationsExceededError(
      limits.storageOperationsPerPeriod,
      period,
      Math.max(1, Math.ceil((next - now.getTime()) / 1000)),
      new Date(next).toISOString().slice(0, 10),
    );
  }
  agent.operationsInFlight += 1;
  let settled = false;
  return {
    commit(operation, fileId) {
      if (settled) return;
      settled = true;
      agent.operationsInFlight -= 1;
      context.operations.append({ time: new Date(context.now()).toISOString(), agent: agentId, op: operation, file: fileId });
    },
    release() {
      if (settled) return;
      settled = true;
      agent.operationsInFlight -= 1;
    },
  };
}

/** Take quota space for bytes about to be written; false when they do not fit. */
export function reserveBytes(agent: AgentFiles, limits: StorageLimits, bytes: number): boolean {
  if (agent.usedBytes + agent.reservedBytes + bytes > limits.storageBytes) return false;
  agent.reservedBytes += bytes;
  return true;
}

export function blobKeyOf(record: Pick<FileRecord, "agentId" | "id">): string {
  return blobKey(record.agentId, record.id);
}

/** Remove a file's blob and record, logging (not throwing) what fails: used on cleanup paths. */
export async function discardFile(context: StorageContext, record: FileRecord): Promise<void> {
  await discardBlob(context, blobKeyOf(record));
  await context.records.remove(record).catch((error: unknown) => context.logger.warn(`storage: could not remove record ${record.id}: ${String(error)}`));
}

/** Remove a blob, logging (not throwing) what fails: a cleanup must not fail what it cleans up after. */
export async function discardBlob(context: StorageContext, key: string): Promise<void> {
  await context.blobs.remove(key).catch((error: unknown) => context.logger.warn(`storage: could not remove blob ${key}: ${String(error)}`));
}
