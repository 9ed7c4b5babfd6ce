// A failure of the store behind the blobs, as the client hears it: 503 naming what failed and why
// (`S3 PutObject: InvalidAccessKeyId`), never the bucket, host, key or credentials, which the log
// has. Looked for along the error's causes: a driver library may wrap the store's error.
import { BlobStoreFailure } from "../../blobs/blob-store.js";
import { StorageUnavailableError } from "../errors.js";

export function storageUnavailableOf(error: unknown): StorageUnavailableError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof BlobStoreFailure) {
      return new StorageUnavailableError(`The file store could not serve this request (${cause.reason}); try again later.`);
    }
  }
  return undefined;
}
