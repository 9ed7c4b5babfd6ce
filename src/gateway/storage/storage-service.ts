// Per-agent file storage: the /v1/storage endpoints without HTTP. Files are found only through
// the caller's own agent (another agent's id reads as missing); bytes live in the blob store
// under `<agent id>:<file id>`; the records, lists, quotas and operation counts are the file
// state's (store/file-state.ts: this home's, or Redis shared by several instances). Signed links
// (blobs/signed-links.ts) carry downloads and presigned uploads, which need no API key.
import path from "node:path";
import { Readable } from "node:stream";
import { type BlobStore, forwardStream } from "../../blobs/blob-store.js";
import { createBlobStore } from "../../blobs/create-blob-store.js";
import { buildSignedUrl, type LinkClaims, type LinkMethod, verifyLink } from "../../blobs/signed-links.js";
import { configuredSigningSecret, loadSigningSecret } from "../../blobs/signing-secret.js";
import type { StorageSettings } from "../../config/config-schema.js";
import type { FilePurpose, FileRecord, ImageAssetInfo } from "../../store/file-records.js";
import { FILE_LEASE_MS, type FileCursor, type FileStateRecords } from "../../store/file-state.js";
import { periodOf } from "../../store/usage-log.js";
import { roundedSize } from "../../text/byte-sizes.js";
import { sameContentType } from "./content-type.js";
import { blobKeyOf, discardBlob, discardFile, type StorageContext, type StorageLimits, type StorageLogger, takeOperation } from "./storage-context.js";
import {
  FileNotFoundError,
  FileStateConflictError,
  FileTooLargeError,
  LinkExpiredError,
  LinkRefusedError,
  StorageQuotaExceededError,
  StorageRequestError,
  UploadSizeExceededError,
} from "./storage-errors.js";
import type { ListQuery, PresignRequest } from "./storage-requests.js";
import { openStoredBytes } from "./stored-bytes.js";
import { isFileId, newFileId, type StorageQuota, type StoredFile, toStoredFile } from "./stored-file.js";
import { UploadMeter } from "./upload-meter.js";
import { UploadSession } from "./upload-session.js";

/** Where signed links are served; the file id follows. */
export const SIGNED_BLOB_PATH = "/v1/storage/blobs/";

/**
 * A temp file of another live process unwritten for this long is no upload in flight (Node ends a
 * request after 5 minutes unless told otherwise): its pid was reused. Those of processes that are
 * gone are removed at start whatever their age.
 */
const QUIET_PARTIAL_MS = 60 * 60 * 1000;

export interface StorageOpenOptions {
  dataDir: string;
  /** The index and quotas: this home's or shared (store/open-state.ts). */
  files: FileStateRecords;
  blobsDir: string;
  settings: () => StorageSettings;
  logger: StorageLogger;
  now?: () => number;
  /**
   * An upload intent older than this is one whose instance died mid-way (a shared state): its
   * record and any bytes are removed by a sweep every ABANDONED_SWEEP_MS. Longer than any upload
   * may last (the server's body timeout) and than an upload's leases.
   */
  abandonedUploadMs?: number;
}

/** How often an instance looks for uploads abandoned by another that died. */
const ABANDONED_SWEEP_MS = 10 * 60_000;

export interface PresignedUpload extends StoredFile {
  uploadUrl: string;
  expiresIn: number;
}

/** The GET /v1/storage/files answer. */
export interface StoredFileList {
  data: StoredFile[];
  pagination: { page: number; limit: number; total: number };
}

export interface DownloadLink {
  url: string;
  filename: string;
  contentType: string;
  expiresIn: number;
}

export interface SignedLinkRequest {
  method: string;
  /** The id segment of the link's path, as presented. */
  id: string;
  query: URLSearchParams;
  /** Names the request in the log when the stored bytes cannot be read. */
  requestId?: string;
}

export interface SignedDownload {
  file: StoredFile;
  body: Readable;
  sizeBytes: number;
}

export class StorageService {
  private fileSecret: Buffer | null = null;
  /** The last totals read, answered when the state cannot be read (the metrics must not fail). */
  private lastTotals = { files: 0, bytes: 0 };
  private readonly abandonedSweep: NodeJS.Timeout;

  private constructor(
    private readonly context: StorageContext,
    private readonly secretFile: string,
    private readonly abandonedUploadMs: number,
  ) {
    this.abandonedSweep = setInterval(() => void this.sweepAbandonedUploads(), ABANDONED_SWEEP_MS);
    this.abandonedSweep.unref();
  }

  static async open(options: StorageOpenOptions): Promise<StorageService> {
    const directory = path.join(options.dataDir, "storage");
    const settings = options.settings();
    const blobs = await createBlobStore(settings, options.blobsDir);
    const context: StorageContext = {
      files: options.files,
      blobs,
      settings: options.settings,
      now: options.now ?? Date.now,
      logger: options.logger,
    };
    const service = new StorageService(context, path.join(directory, "signing.key"), options.abandonedUploadMs ?? FILE_LEASE_MS);
    if (settings.signingSecret === null) service.secret();
    await service.recover(settings.driver === "fs");
    void service.sweepAbandonedUploads();
    return service;
  }

  get blobs(): BlobStore {
    return this.context.blobs;
  }

  /** Stored files and bytes over every agent (the metrics); the last ones read when the state cannot be read now. */
  async totals(): Promise<{ files: number; bytes: number }> {
    try {
      this.lastTotals = await this.context.files.totals();
    } catch (error) {
      this.context.logger.warn(`storage: totals not read: ${error instanceof Error ? error.message : String(error)}`);
    }
    return this.lastTotals;
  }

  async list(agentId: string, query: ListQuery): Promise<StoredFileList> {
    await this.dropExpiredUploads(agentId);
    const { records, total } = await this.context.files.page(agentId, query.page, query.limit);
    return { data: records.map(toStoredFile), pagination: { page: query.page, limit: query.limit, total } };
  }

  async quota(agentId: string, limits: StorageLimits): Promise<StorageQuota> {
    await this.dropExpiredUploads(agentId);
    const { usedBytes } = await this.context.files.space(agentId);
    return {
      usedBytes,
      limitBytes: limits.storageBytes,
      usedFormatted: roundedSize(usedBytes),
      limitFormatted: roundedSize(limits.storageBytes),
    };
  }

  /** The counted operations (upload, presigned upload, delete) the agent made this period (a calendar month, UTC), and the plan's limit. */
  async operations(agentId: string, limits: StorageLimits): Promise<{ used: number; limit: number; period: string }> {
    const period = periodOf(new Date(this.context.now()));
    return { used: await this.context.files.operationCount(agentId, period), limit: limits.storageOperationsPerPeriod, period };
  }

  /** A multipart upload: counts as an operation (429 when none is left) once it commits. */
  async startUpload(agentId: string, limits: StorageLimits): Promise<UploadSession> {
    await this.dropExpiredUploads(agentId);
    return new UploadSession(this.context, agentId, limits, await takeOperation(this.context, agentId, limits));
  }

  /**
   * Store bytes the gateway produced (a generated picture) as one of the agent's files: the same
   * path as a multipart upload, so it counts against the quota and the operations like one.
   */
  async storeBytes(
    agentId: string,
    limits: StorageLimits,
    file: { filename: string; contentType: string; bytes: Buffer; image?: ImageAssetInfo },
  ): Promise<StoredFile> {
    const { bytes, ...rest } = file;
    return this.storeStream(agentId, limits, { ...rest, body: Readable.from([bytes]) });
  }

  /** Store a file the gateway made, streamed (a video clip, a batch's output): metered like an upload, never whole in memory. */
  async storeStream(
    agentId: string,
    limits: StorageLimits,
    file: { filename: string; contentType: string; body: Readable; image?: ImageAssetInfo; purpose?: FilePurpose },
  ): Promise<StoredFile> {
    const session = await this.startUpload(agentId, limits);
    try {
      await session.receive({ filename: file.filename, contentType: file.contentType, body: file.body });
      return await session.commit({ image: file.image, purpose: file.purpose });
    } catch (error) {
      await session.abort();
      throw error;
    }
  }

  /** The agent's files (ready and pending) in id order from a cursor (OpenAI's Files API lists this way), and whether more follow. */
  async listFrom(agentId: string, cursor: FileCursor): Promise<{ records: FileRecord[]; hasMore: boolean }> {
    await this.dropExpiredUploads(agentId);
    return this.context.files.listFrom(agentId, cursor);
  }

  /** One of the agent's ready files, or undefined (missing, another agent's, malformed id, no bytes yet). */
  async findFile(agentId: string, id: string): Promise<FileRecord | undefined> {
    if (!isFileId(id)) return undefined;
    const record = await this.context.files.find(id);
    return record?.state === "ready" && record.agentId === agentId ? record : undefined;
  }

  /** The bytes of one of the agent's ready files (a library picture used as input), or undefined. */
  async readFileBytes(agentId: string, id: string): Promise<{ file: FileRecord; bytes: Buffer } | undefined> {
    const record = await this.findFile(agentId, id);
    if (!record) return undefined;
    const blob = await this.context.blobs.read(blobKeyOf(record));
    if (!blob) return undefined;
    const chunks: Buffer[] = [];
    for await (const chunk of blob.body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
    return { file: record, bytes: Buffer.concat(chunks) };
  }

  /**
   * The bytes of one of the agent's ready files, streamed (never whole in memory), checked before
   * the answer starts as a signed download's are; 404 for anything else.
   */
  async openFile(agentId: string, id: string, requestId?: string): Promise<{ file: FileRecord; body: Readable; sizeBytes: number }> {
    const record = await this.findFile(agentId, id);
    if (!record) throw new FileNotFoundError();
    const blob = await openStoredBytes(this.context, record, requestId);
    return { file: record, body: blob.body, sizeBytes: blob.sizeBytes };
  }

  /** Create the record at once (its size counts against the quota) and sign a one-time PUT link. */
  async presign(agentId: string, limits: StorageLimits, request: PresignRequest, baseUrl: string): Promise<PresignedUpload> {
    await this.dropExpiredUploads(agentId);
    const settings = this.context.settings();
    const files = this.context.files;
    const operation = await takeOperation(this.context, agentId, limits);
    try {
      if (request.sizeBytes > settings.maxFileBytes) throw new FileTooLargeError(settings.maxFileBytes);
      const now = this.context.now();
      const id = newFileId(now);
      const grant = await files.grantBytes(agentId, id, request.sizeBytes, request.sizeBytes, limits.storageBytes);
      if (!grant.ok) {
        throw new StorageQuotaExceededError({
          usedBytes: grant.usedBytes,
          limitBytes: limits.storageBytes,
          fileBytes: request.sizeBytes,
          reservedBytes: grant.reservedBytes,
        });
      }
      const expires = Math.floor(now / 1000) + settings.linkTtlSeconds;
      const record: FileRecord = {
        id,
        agentId,
        filename: request.filename,
        contentType: request.contentType,
        sizeBytes: request.sizeBytes,
        createdAt: new Date(now).toISOString(),
        state: "pending",
        uploadExpires: expires,
      };
      // The space granted becomes the pending record's in the same step.
      try {
        await files.save(record, { grant: id });
      } catch (error) {
        await files.returnBytes(agentId, id).catch(() => undefined);
        throw error;
      }
      await operation.commit("presigned-upload", record.id);
      const uploadUrl = this.signFileLink(baseUrl, "PUT", record, expires);
      return { ...toStoredFile(record), uploadUrl, expiresIn: settings.linkTtlSeconds };
    } catch (error) {
      await operation.release().catch(() => undefined);
      throw error;
    }
  }

  /**
   * A signed download link for one of the agent's stored files, valid `linkTtlSeconds` from now, or
   * until `expires` (unix seconds) when given: the same expiry always signs the same link.
   */
  async downloadLink(agentId: string, id: string, baseUrl: string, expires?: number): Promise<DownloadLink> {
    const record = await this.ownFile(agentId, id);
    if (record.state !== "ready") throw new FileStateConflictError("This file has no bytes yet: its presigned upload has not been completed.");
    const nowSeconds = Math.floor(this.context.now() / 1000);
    const ttl = expires === undefined ? this.context.settings().linkTtlSeconds : Math.max(0, expires - nowSeconds);
    if (expires === undefined) expires = nowSeconds + ttl;
    const url = this.signFileLink(baseUrl, "GET", record, expires);
    return { url, filename: record.filename, contentType: record.contentType, expiresIn: ttl };
  }

  /** Delete bytes, record and (since they name a file that is gone) every link to it. Permanent. */
  async remove(agentId: string, limits: StorageLimits, id: string): Promise<void> {
    const record = await this.ownFile(agentId, id);
    const operation = await takeOperation(this.context, agentId, limits);
    let removed: FileRecord | undefined;
    try {
      removed = await this.context.files.remove(record);
    } catch (error) {
      await operation.release().catch(() => undefined);
      throw error;
    }
    // A parallel delete (on any instance) removed it first: that one counts, this one is a 404.
    if (!removed) {
      await operation.release();
      throw new FileNotFoundError();
    }
    // A presigned upload still streaming finds its record gone and discards the bytes it writes.
    await discardFile(this.context, removed);
    await operation.commit("delete", record.id);
  }

  async openSignedDownload(request: SignedLinkRequest): Promise<SignedDownload> {
    const claims = this.verify(request, "GET");
    const record = isFileId(request.id) ? await this.context.files.find(request.id) : undefined;
    if (record?.state !== "ready" || record.contentType !== claims.contentType || record.sizeBytes !== claims.sizeBytes) throw new FileNotFoundError();
    const blob = await openStoredBytes(this.context, record, request.requestId);
    return { file: toStoredFile(record), body: blob.body, sizeBytes: blob.sizeBytes };
  }

  /** The bytes of a presigned upload: once, with the signed Content-Type and exactly the signed size. */
  async receiveSignedUpload(request: SignedLinkRequest & { contentType: string | null; contentLength: number | null }, body: Readable): Promise<StoredFile> {
    const claims = this.verify(request, "PUT");
    const record = isFileId(request.id) ? await this.context.files.find(request.id) : undefined;
    if (!record || record.contentType !== claims.contentType || record.sizeBytes !== claims.sizeBytes) throw new FileNotFoundError();
    if (record.state === "ready")
      throw new LinkRefusedError("This upload link was already used: the file is stored. Ask for a new presigned upload to store other bytes.");
    if (!sameContentType(request.contentType, claims.contentType)) {
      throw new LinkRefusedError(`This link was signed for Content-Type ${claims.contentType}; send the bytes with exactly that Content-Type.`);
    }
    if (request.contentLength !== null && request.contentLength > claims.sizeBytes)
      throw new UploadSizeExceededError(claims.sizeBytes, request.contentLength, { closeConnection: true });
    if (request.contentLength !== null && request.contentLength < claims.sizeBytes) throw sizeShortfall(claims.sizeBytes, request.contentLength);
    // One upload per link at a time, on every instance.
    const receiving = await this.context.files.claimReceiving(record.id, FILE_LEASE_MS);
    if (!receiving) throw new FileStateConflictError("An upload to this link is already in progress.");
    try {
      const meter = new UploadMeter({
        maxBytes: claims.sizeBytes,
        hardCapBytes: claims.sizeBytes,
        // No grant: the space was taken when the upload was signed.
        errorFor: (_failure, totalBytes) => new UploadSizeExceededError(claims.sizeBytes, totalBytes),
      });
      const key = blobKeyOf(record);
      const written = await this.context.blobs.write(key, forwardStream(body, meter));
      if (written !== claims.sizeBytes) {
        await discardBlob(this.context, key);
        throw sizeShortfall(claims.sizeBytes, written);
      }
      const ready: FileRecord = { ...record, state: "ready" };
      delete ready.uploadExpires;
      // Deleted while the bytes were being written: the delete wins, and the bytes go.
      if (!(await this.context.files.save(ready, { ifPresent: true }))) {
        await discardBlob(this.context, key);
        throw new FileNotFoundError();
      }
      return toStoredFile(ready);
    } finally {
      await receiving.release().catch((error: unknown) => this.context.logger.warn(`storage: a receiving claim was not released: ${String(error)}`));
    }
  }

  /**
   * Remove the uploads an instance that died left half-done (shared state only; the embedded
   * state recovers its own at start): their records and any bytes. Never throws; says what it did.
   */
  async sweepAbandonedUploads(): Promise<number> {
    try {
      const abandoned = await this.context.files.abandonedUploads(this.abandonedUploadMs, 100);
      for (const record of abandoned) await discardFile(this.context, record);
      if (abandoned.length > 0) this.context.logger.warn(`storage: removed ${abandoned.length} upload(s) left unfinished by an instance that stopped`);
      return abandoned.length;
    } catch (error) {
      this.context.logger.warn(`storage: looking for abandoned uploads failed: ${error instanceof Error ? error.message : String(error)}`);
      return 0;
    }
  }

  /** The blob store is this service's; the file state is closed with the rest of the state. */
  async close(): Promise<void> {
    clearInterval(this.abandonedSweep);
    await this.context.blobs.close();
  }

  /** Drop the agent's presigned uploads whose link expired without bytes, with their space. */
  private async dropExpiredUploads(agentId: string): Promise<void> {
    const dropped = await this.context.files.dropExpiredUploads(agentId, Math.floor(this.context.now() / 1000));
    for (const record of dropped) await discardFile(this.context, record);
  }

  private async ownFile(agentId: string, id: string): Promise<FileRecord> {
    if (!isFileId(id)) throw new FileNotFoundError();
    await this.dropExpiredUploads(agentId);
    const record = await this.context.files.find(id);
    if (!record || record.agentId !== agentId) throw new FileNotFoundError();
    return record;
  }

  private secret(): Buffer {
    const configured = this.context.settings().signingSecret;
    if (configured !== null) return configuredSigningSecret(configured);
    this.fileSecret ??= loadSigningSecret(null, this.secretFile);
    return this.fileSecret;
  }

  /** A link to one file's bytes, for one method, until `expires` (unix seconds); it names the file's type and size. */
  private signFileLink(baseUrl: string, method: LinkMethod, record: FileRecord, expires: number): string {
    return buildSignedUrl(baseUrl, this.secret(), {
      method,
      path: `${SIGNED_BLOB_PATH}${record.id}`,
      expires,
      contentType: record.contentType,
      sizeBytes: record.sizeBytes,
    });
  }

  /** The link's claims when it is genuine, current and for `expected`; else 403 (or 410 when expired). */
  private verify(request: SignedLinkRequest, expected: LinkMethod): LinkClaims {
    const check = verifyLink(
      this.secret(),
      { method: request.method, path: `${SIGNED_BLOB_PATH}${request.id}`, query: request.query },
      Math.floor(this.context.now() / 1000),
    );
    if (check.ok && check.claims.method === expected) return check.claims;
    // A genuine link for another method, or past its expiry, carries its claims.
    const claims = check.claims;
    if (claims && (check.ok || check.reason === "method")) throw new LinkRefusedError(`This link is for ${claims.method} requests only.`);
    if (claims && !check.ok && check.reason === "expired") throw new LinkExpiredError(claims.expires);
    throw new LinkRefusedError("This link is not valid: it is incomplete or was altered.");
  }

  /**
   * Embedded state only (Redis's records outlive any one instance): bring the index up from the
   * records found at start: uploads cut short by a crash are removed with any bytes; presigned
   * uploads keep their record (while the link lives) but lose unacknowledged bytes.
   */
  private async recover(localBlobs: boolean): Promise<void> {
    const recovery = this.context.files.recovery;
    if (!recovery) return;
    const now = Math.floor(this.context.now() / 1000);
    for (const record of recovery.records) {
      if (record.state === "ready") {
        recovery.restore(record);
      } else if (record.state === "pending" && (record.uploadExpires ?? 0) >= now) {
        await discardBlob(this.context, blobKeyOf(record));
        recovery.restore(record);
      } else {
        await discardFile(this.context, record);
      }
    }
    recovery.done();
    if (!localBlobs) return;
    // Local disk only: a blob without a record (a crash between a delete's two steps) is garbage,
    // and so are the temp files of writes no live process owns (the bytes of the `uploading`
    // records just dropped are there, not under their key). A shared remote bucket is never
    // swept: other data may live there.
    await this.context.blobs.sweepPartials?.(QUIET_PARTIAL_MS);
    for (const key of await this.context.blobs.keys()) {
      const [agentId, fileId, ...rest] = key.split(":");
      if (rest.length > 0 || !agentId || !fileId || !isFileId(fileId)) continue;
      const record = await this.context.files.find(fileId);
      if (!record || record.agentId !== agentId) await discardBlob(this.context, key);
    }
  }
}

function sizeShortfall(signed: number, received: number): StorageRequestError {
  return new StorageRequestError(
    `This link was signed for ${signed} bytes but ${received} arrived; nothing was stored. Send exactly ${signed} bytes.`,
    "size_mismatch",
  );
}
