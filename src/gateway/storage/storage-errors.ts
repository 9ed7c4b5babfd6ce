// Storage errors. On /v1/storage/* every error renders as a bare `{message}` (docs/decisions.md §2;
// server/render-error.ts, "storage" dialect); type and code only name the class in logs.
import { roundedSize } from "../../text/byte-sizes.js";
import { apiError, GatewayError } from "../errors.js";

/** Missing, another agent's, or a malformed id: one answer for all (docs/decisions.md §2). */
export class FileNotFoundError extends apiError(404, "invalid_request_error", "file_not_found") {
  constructor() {
    super("File not found.");
  }
}

export class FileTooLargeError extends apiError(413, "invalid_request_error", "file_too_large") {
  constructor(maxFileBytes: number, options: { closeConnection?: boolean } = {}) {
    super(`The file is larger than the ${roundedSize(maxFileBytes)} limit per file (${maxFileBytes} bytes).`);
    // Said before the body was read: close the connection rather than read the rest of it.
    if (options.closeConnection) this.headers = { connection: "close" };
  }
}

/** More bytes than a presigned upload link was signed for. */
export class UploadSizeExceededError extends apiError(413, "invalid_request_error", "upload_size_exceeded") {
  constructor(signedBytes: number, receivedBytes: number, options: { closeConnection?: boolean } = {}) {
    super(`This link was signed for ${signedBytes} bytes and the upload is larger (${receivedBytes} bytes); nothing was stored.`);
    if (options.closeConnection) this.headers = { connection: "close" };
  }
}

export class StorageQuotaExceededError extends apiError(413, "invalid_request_error", "storage_quota_exceeded") {
  constructor(usage: { usedBytes: number; limitBytes: number; fileBytes: number; reservedBytes: number }) {
    const reserved = usage.reservedBytes > 0 ? ` (plus ${roundedSize(usage.reservedBytes)} held by uploads in progress)` : "";
    super(
      `Storage quota exceeded: ${roundedSize(usage.usedBytes)} used${reserved} of ${roundedSize(usage.limitBytes)}, ` +
        `and this file is ${roundedSize(usage.fileBytes)} (${usage.usedBytes} of ${usage.limitBytes} bytes used, file ${usage.fileBytes} bytes). ` +
        "Delete files or move to a larger plan.",
    );
  }
}

export class StorageOperationsExceededError extends apiError(429, "rate_limit_error", "storage_operations_exceeded") {
  constructor(limit: number, period: string, retryAfterSeconds: number, resetsOn: string) {
    super(
      `Storage operation limit reached: ${limit} uploads, presigned uploads and deletes per period (${period}) on this plan. The count resets on ${resetsOn} (UTC).`,
    );
    this.headers = { "retry-after": String(retryAfterSeconds) };
  }
}

/** A request the storage endpoints cannot take: bad multipart, no `file` part, bad field ... */
export class StorageRequestError extends GatewayError {
  readonly status = 400;
  readonly type = "invalid_request_error";
  readonly code: string;
  constructor(message: string, code = "invalid_upload") {
    super(message);
    this.code = code;
  }
}

/** The client went away before the upload finished; nothing of it is kept. */
export class UploadAbortedError extends apiError(400, "invalid_request_error", "upload_aborted") {
  constructor() {
    super("The upload ended before all of its bytes arrived; nothing was stored.");
  }
}

/** A signed link that is malformed, altered, for another method, or used once already. */
export class LinkRefusedError extends apiError(403, "permission_error", "link_refused") {}

export class LinkExpiredError extends apiError(410, "invalid_request_error", "link_expired") {
  constructor(expiredAt: number) {
    super(`This link expired at ${new Date(expiredAt * 1000).toISOString()}; ask for a new one.`);
  }
}

/** The file exists but is not in a state for this (a presigned upload still waiting for bytes ...). */
export class FileStateConflictError extends apiError(409, "invalid_request_error", "file_state_conflict") {}

/**
 * A stored file whose bytes cannot be read: gone, cut short, unreadable, a directory in their
 * place (an operator's mistake or a damaged disk). The cause goes to the log, not to the client.
 */
export class StoredBytesUnreadableError extends apiError(500, "server_error", "stored_bytes_unreadable") {
  constructor() {
    super("The stored bytes of this file cannot be read. Nothing was changed; the cause is in the gateway's log under this response's X-Request-Id.");
  }
}
