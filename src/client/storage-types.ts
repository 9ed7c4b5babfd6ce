// Shapes of the storage endpoints' answers (spec "Stored file", "Storage quota", Storage table),
// and what an upload is made of on the client side.

export interface StoredFile {
  id: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  createdAt: string;
}

export interface StoredFileBody {
  data: StoredFile;
}

export interface FileListBody {
  data: StoredFile[];
  pagination: { page: number; limit: number; total: number };
}

export interface PresignedUploadBody {
  data: StoredFile & { uploadUrl: string; expiresIn: number };
}

export interface FileUrlBody {
  data: { url: string; filename: string; contentType: string; expiresIn: number };
}

export interface StorageQuotaBody {
  data: { usedBytes: number; limitBytes: number; usedFormatted: string; limitFormatted: string };
}

/** The quota endpoint's header that carries the gateway's per-file upload limit, in bytes. */
export const MAX_FILE_BYTES_HEADER = "x-service-max-file-bytes";

export interface StorageLimits {
  quota: StorageQuotaBody;
  /** The largest file the gateway takes; undefined when it does not say (an older gateway). */
  maxFileBytes: number | undefined;
}

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
