// A stored file and the quota as the API returns them, and the ids the gateway gives files.
import { monotonicFactory } from "ulid";
import type { FileRecord } from "../../store/file-records.js";

export interface StoredFile {
  id: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  createdAt: string;
}

export interface StorageQuota {
  usedBytes: number;
  limitBytes: number;
  usedFormatted: string;
  limitFormatted: string;
}

const nextUlid = monotonicFactory();
const FILE_ID = /^file_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Ids are ULIDs: unguessable (80 random bits), and in creation order. */
export function newFileId(now: number): string {
  return `file_${nextUlid(now)}`;
}

/** Anything else (a traversal attempt, a filename) is not an id and is not looked up. */
export function isFileId(value: string): boolean {
  return FILE_ID.test(value);
}

export function toStoredFile(record: FileRecord): StoredFile {
  return { id: record.id, filename: record.filename, contentType: record.contentType, sizeBytes: record.sizeBytes, createdAt: record.createdAt };
}
