// Opening a stored file's bytes for a download. Whatever is wrong with them on disk is found
// before the answer starts, so the client gets a `{message}` 500 (503 when the store refused or
// did not answer) and the log gets the cause under the request's id: once a 200 is under way a failure can only cut the body short (and srvx
// answers a read failing before the first byte with a bare 500 that nobody logs).

import type { Readable } from "node:stream";
import type { FileRecord } from "../../store/file-records.js";
import { storageUnavailableOf } from "./blob-store-failures.js";
import { blobKeyOf, type StorageContext } from "./storage-context.js";
import { FileNotFoundError, StoredBytesUnreadableError } from "./storage-errors.js";

export async function openStoredBytes(
  context: StorageContext,
  record: FileRecord,
  requestId: string | undefined,
): Promise<{ body: Readable; sizeBytes: number }> {
  const key = blobKeyOf(record);
  const unreadable = (cause: unknown) => {
    logFault(context, cause, requestId);
    // A store that refused or did not answer is not a lost file: 503, try again.
    return storageUnavailableOf(cause) ?? new StoredBytesUnreadableError();
  };
  let blob: { body: Readable; sizeBytes: number } | null;
  try {
    blob = await context.blobs.read(key);
  } catch (error) {
    throw unreadable(error);
  }
  if (!blob) {
    // Deleted meanwhile (a delete leaves the index first): missing. Still indexed: lost.
    if ((await context.files.find(record.id))?.state !== "ready") throw new FileNotFoundError();
    throw unreadable(new Error(`storage: blob ${key} of a stored file is missing`));
  }
  if (blob.sizeBytes !== record.sizeBytes) {
    blob.body.destroy();
    throw unreadable(new Error(`storage: blob ${key} holds ${blob.sizeBytes} bytes, its record says ${record.sizeBytes}`));
  }
  blob.body.once("error", (error: NodeJS.ErrnoException) => {
    // The client going away is no fault of the bytes.
    if (error.code !== "ERR_STREAM_PREMATURE_CLOSE") logFault(context, error, requestId);
  });
  return blob;
}

function logFault(context: StorageContext, cause: unknown, requestId: string | undefined): void {
  if (context.logger.error) context.logger.error(cause, requestId);
  else
    context.logger.warn(
      `${requestId ? `${requestId} ` : ""}storage: stored bytes cannot be read: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`,
    );
}
