// Stored files into Redis (records, each agent's list and space) and their bytes into the shared
// blob store, blob by blob as streams. A record is saved after its blob is in place, so no
// instance ever lists a file whose bytes are missing; a blob already there with the same size (an
// earlier run) is not sent again, and saving a record again changes no count. A record still
// `uploading` is an upload the server was receiving when it stopped: left behind with its bytes,
// as a backup leaves it. The period's counted operations (upload, presigned-upload, delete) follow.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { type BlobStore, blobKey } from "../../blobs/blob-store.js";
import { FileOperationsLog } from "../../store/file-operations-log.js";
import { FileRecordStore } from "../../store/file-records.js";
import type { RedisFileState } from "../../store/redis-file-state.js";

export interface FilesCopy {
  records: number;
  bytes: number;
  /** Blobs sent to the target, and those found there already with the same size. */
  blobsCopied: number;
  blobsPresent: number;
  notes: string[];
}

/** `target` undefined: the blobs already are where every instance reads them. */
export async function copyFiles(storageDirectory: string, source: BlobStore, target: BlobStore | undefined, files: RedisFileState): Promise<FilesCopy> {
  const copy: FilesCopy = { records: 0, bytes: 0, blobsCopied: 0, blobsPresent: 0, notes: [] };
  const { records } = await FileRecordStore.open(path.join(storageDirectory, "records"));
  records.sort((a, b) => a.id.localeCompare(b.id));
  for (const record of records) {
    if (record.state === "uploading") {
      copy.notes.push(`file ${record.id} of agent ${record.agentId} was still uploading: left behind`);
      continue;
    }
    if (record.state === "ready") {
      const key = blobKey(record.agentId, record.id);
      const outcome = target ? await copyBlob(key, source, target) : (await source.has(key)) ? "present" : "missing";
      if (outcome === "missing") {
        copy.notes.push(`file ${record.id} of agent ${record.agentId} has no bytes in the home's blob store: its record was not copied`);
        continue;
      }
      if (outcome === "copied") copy.blobsCopied += 1;
      else copy.blobsPresent += 1;
    }
    await files.save(record);
    copy.records += 1;
    copy.bytes += record.sizeBytes;
  }
  return copy;
}

async function copyBlob(key: string, source: BlobStore, target: BlobStore): Promise<"copied" | "present" | "missing"> {
  const blob = await source.read(key);
  if (!blob) return "missing";
  const there = await target.read(key);
  if (there) {
    there.body.destroy();
    if (there.sizeBytes === blob.sizeBytes) {
      blob.body.destroy();
      return "present";
    }
  }
  const written = await target.write(key, blob.body);
  if (written !== blob.sizeBytes) throw new Error(`blob ${key}: ${written} bytes written of ${blob.sizeBytes}`);
  return "copied";
}

/** The counted operations per agent and period, as the home's operations logs (`<period>.jsonl`) count them. */
export async function copyOperationCounts(storageDirectory: string, files: RedisFileState): Promise<number> {
  const directory = path.join(storageDirectory, "operations");
  if (!existsSync(directory)) return 0;
  const log = FileOperationsLog.open(directory);
  let counted = 0;
  try {
    for (const name of readdirSync(directory).sort()) {
      const period = /^(\d{4}-\d{2})\.jsonl$/.exec(name)?.[1];
      if (period === undefined) continue;
      for (const [agentId, count] of log.agentCounts(period)) {
        await files.importOperationCount(agentId, period, count);
        counted += count;
      }
    }
  } finally {
    log.close();
  }
  return counted;
}
