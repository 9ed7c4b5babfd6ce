// Shapes of the storage endpoints' answers (a stored file, a page of them, a link, the quota),
// derived from the server's answer types (type imports only: erased, so the client never loads
// the gateway; docs/decisions.md §1), and what an upload is made of on the client side.

import type { ListQuery, PresignRequestInput } from "../gateway/storage/storage-requests.js";
import type { DownloadLink, PresignedUpload, StoredFileList } from "../gateway/storage/storage-service.js";
import type { StoredFile as ServerStoredFile, StorageQuota } from "../gateway/storage/stored-file.js";

export type StoredFile = ServerStoredFile;

/** POST /v1/storage/upload (201) and the presigned PUT: the route wraps the file in `data`. */
export interface StoredFileBody {
  data: StoredFile;
}

/** GET /v1/storage/files, as StorageService.list builds it. */
export type FileListBody = StoredFileList;

/** The query of GET /v1/storage/files (page from 1, limit 1 to 100; the server's defaults otherwise). */
export type FileListQuery = Partial<ListQuery>;

/** What a client may send to POST /v1/storage/presigned-upload. */
export type PresignUploadRequest = PresignRequestInput;

export interface PresignedUploadBody {
  data: PresignedUpload;
}

/** GET /v1/storage/files/:id/url. */
export interface FileUrlBody {
  data: DownloadLink;
}

/** GET /v1/storage/quota. */
export interface StorageQuotaBody {
  data: StorageQuota;
}

/**
 * The quota endpoint's header that carries the gateway's per-file upload limit, in bytes. A value,
 * so kept here rather than imported from the server's route (server/routes/storage.ts).
 */
export const MAX_FILE_BYTES_HEADER = "x-service-max-file-bytes";
/** The quota endpoint's headers with the storage operations counted this period (as the server's route names them). */
export const OPERATIONS_USED_HEADER = "x-service-storage-operations-used";
export const OPERATIONS_LIMIT_HEADER = "x-service-storage-operations-limit";
export const OPERATIONS_PERIOD_HEADER = "x-service-storage-period";

export interface StorageOperations {
  used: number;
  limit: number;
  /** YYYY-MM (UTC): operations count per calendar month. */
  period: string;
}

export interface StorageLimits {
  quota: StorageQuotaBody;
  /** The largest file the gateway takes; undefined when it does not say (an older gateway). */
  maxFileBytes: number | undefined;
  /** Uploads, presigned uploads and deletes this period; undefined when the gateway does not say. */
  operations: StorageOperations | undefined;
}

/** DELETE /v1/storage/files/:id, and every storage error: a bare `{message}` (docs/decisions.md §2; built by the route). */
export interface MessageBody {
  message: string;
}

/** A file to upload: its bytes are read as they are sent, never all at once. */
export interface UploadSource {
  filename: string;
  contentType: string;
  sizeBytes: number;
  /** A fresh stream of exactly sizeBytes bytes, read as it is sent. */
  open: () => AsyncIterable<Uint8Array>;
}

export interface FileDownload {
  filename: string | undefined;
  contentType: string;
  /** From Content-Length; undefined when the server sent none. */
  sizeBytes: number | undefined;
  body: ReadableStream<Uint8Array>;
}
