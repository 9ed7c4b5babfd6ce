// A failure of the store behind the blobs, or of the shared state store (Redis), as the client
// hears it: 503 naming what failed and why (`S3 PutObject: InvalidAccessKeyId`, `Redis hold: no
// answer in time`), never the bucket, host, key or credentials, which the log has. Looked for
// along the error's causes: a driver library may wrap the store's error.
import { BlobStoreFailure } from "../../blobs/blob-store.js";
import { StateStoreFailure } from "../../store/state-failure.js";
import { StateUnavailableError, StorageUnavailableError } from "../errors.js";

export function storeUnavailableOf(error: unknown): StorageUnavailableError | StateUnavailableError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof StateStoreFailure)
      return new StateUnavailableError(`The gateway's state store could not serve this request (${cause.reason}); nothing was charged. Try again shortly.`);
  }
  return storageUnavailableOf(error);
}

export function storageUnavailableOf(error: unknown): StorageUnavailableError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof BlobStoreFailure) {
      return new StorageUnavailableError(`The file store could not serve this request (${cause.reason}); try again later.`);
    }
  }
  return undefined;
}
