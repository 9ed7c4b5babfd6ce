// Per-agent file storage: the /v1/storage endpoints without HTTP. Files are found only through
// the caller's own agent (another agent's id reads as missing); bytes live in the blob store
// under `<agent id>:<file id>`; records and counts are described in store/file-records.ts and
// store/file-operations-log.ts; the in-memory index (file-index.ts) answers lists and quota
// checks. Signed links (blobs/signed-links.ts) carry downloads and presigned uploads, which need
// no API key.
import path from "node:path";
import { Readable } from "node:stream";
import { type BlobStore, forwardStream } from "../../blobs/blob-store.js";
import { createBlobStore } from "../../blobs/create-blob-store.js";
import { buildSignedUrl, type LinkClaims, type LinkMethod, verifyLink } from "../../blobs/signed-links.js";
import { loadSigningSecret } from "../../blobs/signing-secret.js";
import type { StorageSettings } from "../../config/config-schema.js";
import { FileOperationsLog } from "../../store/file-operations-log.js";
import { type FileRecord, FileRecordStore, type ImageAssetInfo } from "../../store/file-records.js";
import { periodOf } from "../../store/usage-log.js";
import { roundedSize } from "../../text/byte-sizes.js";
import { sameContentType } from "./content-type.js";
import { type AgentFiles, FileIndex } from "./file-index.js";
import {
  blobKeyOf,
  discardBlob,
  discardFile,
  reserveBytes,
  type StorageContext,
  type StorageLimits,
  type StorageLogger,
  takeOperation,
} from "./storage-context.js";
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
  blobsDir: string;
  settings: () => StorageSettings;
  logger: StorageLogger;
  now?: () => number;
}

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
  /** Files with a presigned upload streaming in right now (a link works for one upload at a time). */
  private readonly receiving = new Set<string>();
  private fileSecret: Buffer | null = null;

  private constructor(
    private readonly context: StorageContext,
    private readonly secretFile: string,
  ) {}

  static async open(options: StorageOpenOptions): Promise<StorageService> {
    const directory = path.join(options.dataDir, "storage");
    const settings = options.settings();
    const blobs = await createBlobStore(settings, options.blobsDir);
    const { store, records } = await FileRecordStore.open(path.join(directory, "records"));
    const context: StorageContext = {
      records: store,
      blobs,
      operations: FileOperationsLog.open(path.join(directory, "operations")),
      index: new FileIndex(),
      settings: options.settings,
      now: options.now ?? Date.now,
      logger: options.logger,
    };
    const service = new StorageService(context, path.join(directory, "signing.key"));
    if (settings.signingSecret === null) service.secret();
    await service.recover(records, settings.driver === "fs");
    return service;
  }

  get blobs(): BlobStore {
    return this.context.blobs;
  }

  /** Stored files and bytes over every agent, from the index (the metrics). */
  totals(): { files: number; bytes: number } {
    return this.context.index.totals();
  }

  async list(agentId: string, query: ListQuery): Promise<StoredFileList> {
    const agent = await this.agentFiles(agentId);
    return { data: agent.page(query.page, query.limit).map(toStoredFile), pagination: { page: query.page, limit: query.limit, total: agent.count } };
  }

  async quota(agentId: string, limits: StorageLimits): Promise<StorageQuota> {
    const agent = await this.agentFiles(agentId);
    return {
      usedBytes: agent.usedBytes,
      limitBytes: limits.storageBytes,
      usedFormatted: roundedSize(agent.usedBytes),
      limitFormatted: roundedSize(limits.storageBytes),
    };
  }

  /** The counted operations (upload, presigned upload, delete) the agent made this period (a calendar month, UTC), and the plan's limit. */
  operations(agentId: string, limits: StorageLimits): { used: number; limit: number; period: string } {
    const period = periodOf(new Date(this.context.now()));
    return { used: this.context.operations.count(agentId, period), limit: limits.storageOperationsPerPeriod, period };
  }

  /** A multipart upload: counts as an operation (429 when none is left) once it commits. */
  async startUpload(agentId: string, limits: StorageLimits): Promise<UploadSession> {
    const agent = await this.agentFiles(agentId);
    return new UploadSession(this.context, agent, agentId, limits, takeOperation(this.context, agent, agentId, limits));
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

  /** Store a file the gateway made, streamed (a video clip): metered like an upload, never whole in memory. */
  async storeStream(
    agentId: string,
    limits: StorageLimits,
    file: { filename: string; contentType: string; body: Readable; image?: ImageAssetInfo },
  ): Promise<StoredFile> {
    const session = await this.startUpload(agentId, limits);
    try {
      await session.receive({ filename: file.filename, contentType: file.contentType, body: file.body });
      return await session.commit(file.image !== undefined ? { image: file.image } : {});
    } catch (error) {
      await session.abort();
      throw error;
    }
  }

  /** One of the agent's ready files, or undefined (missing, another agent's, malformed id, no bytes yet). */
  async findFile(agentId: string, id: string): Promise<FileRecord | undefined> {
    if (!isFileId(id)) return undefined;
    const record = (await this.agentFiles(agentId)).files.get(id);
    return record?.state === "ready" ? record : undefined;
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

  /** Create the record at once (its size counts against the quota) and sign a one-time PUT link. */
  async presign(agentId: string, limits: StorageLimits, request: PresignRequest, baseUrl: string): Promise<PresignedUpload> {
    const agent = await this.agentFiles(agentId);
    const settings = this.context.settings();
    const operation = takeOperation(this.context, agent, agentId, limits);
    try {
      if (request.sizeBytes > settings.maxFileBytes) throw new FileTooLargeError(settings.maxFileBytes);
      if (!reserveBytes(agent, limits, request.sizeBytes)) {
        throw new StorageQuotaExceededError({
          usedBytes: agent.usedBytes,
          limitBytes: limits.storageBytes,
          fileBytes: request.sizeBytes,
          reservedBytes: agent.reservedBytes,
        });
      }
      const now = this.context.now();
      const expires = Math.floor(now / 1000) + settings.linkTtlSeconds;
      const record: FileRecord = {
        id: newFileId(now),
        agentId,
        filename: request.filename,
        contentType: request.contentType,
        sizeBytes: request.sizeBytes,
        createdAt: new Date(now).toISOString(),
        state: "pending",
        uploadExpires: expires,
      };
      try {
        await this.context.records.save(record);
      } finally {
        agent.reservedBytes -= request.sizeBytes;
      }
      this.context.index.add(record);
      operation.commit("presigned-upload", record.id);
      const uploadUrl = this.signFileLink(baseUrl, "PUT", record, expires);
      return { ...toStoredFile(record), uploadUrl, expiresIn: settings.linkTtlSeconds };
    } catch (error) {
      operation.release();
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
    const agent = await this.agentFiles(agentId);
    const record = isFileId(id) ? agent.files.get(id) : undefined;
    if (!record) throw new FileNotFoundError();
    const operation = takeOperation(this.context, agent, agentId, limits);
    // Gone from the index first, so that a parallel delete, list or link sees it gone at once.
    this.context.index.delete(record);
    try {
      await this.context.records.remove(record);
    } catch (error) {
      this.context.index.add(record);
      operation.release();
      throw error;
    }
    // A presigned upload still streaming finds its record gone and discards its bytes itself.
    if (!this.receiving.has(record.id)) await discardFile(this.context, record);
    operation.commit("delete", record.id);
  }

  async openSignedDownload(request: SignedLinkRequest): Promise<SignedDownload> {
    const claims = this.verify(request, "GET");
    const record = this.context.index.find(request.id);
    if (record?.state !== "ready" || record.contentType !== claims.contentType || record.sizeBytes !== claims.sizeBytes) throw new FileNotFoundError();
    const blob = await openStoredBytes(this.context, record, request.requestId);
    return { file: toStoredFile(record), body: blob.body, sizeBytes: blob.sizeBytes };
  }

  /** The bytes of a presigned upload: once, with the signed Content-Type and exactly the signed size. */
  async receiveSignedUpload(request: SignedLinkRequest & { contentType: string | null; contentLength: number | null }, body: Readable): Promise<StoredFile> {
    const claims = this.verify(request, "PUT");
    const record = this.context.index.find(request.id);
    if (!record || record.contentType !== claims.contentType || record.sizeBytes !== claims.sizeBytes) throw new FileNotFoundError();
    if (record.state === "ready")
      throw new LinkRefusedError("This upload link was already used: the file is stored. Ask for a new presigned upload to store other bytes.");
    if (this.receiving.has(record.id)) throw new FileStateConflictError("An upload to this link is already in progress.");
    if (!sameContentType(request.contentType, claims.contentType)) {
      throw new LinkRefusedError(`This link was signed for Content-Type ${claims.contentType}; send the bytes with exactly that Content-Type.`);
    }
    if (request.contentLength !== null && request.contentLength > claims.sizeBytes)
      throw new UploadSizeExceededError(claims.sizeBytes, request.contentLength, { closeConnection: true });
    if (request.contentLength !== null && request.contentLength < claims.sizeBytes) throw sizeShortfall(claims.sizeBytes, request.contentLength);
    this.receiving.add(record.id);
    try {
      const meter = new UploadMeter({
        maxBytes: claims.sizeBytes,
        hardCapBytes: claims.sizeBytes,
        // The space was taken when the upload was signed.
        reserve: () => true,
        release: () => undefined,
        errorFor: (_failure, totalBytes) => new UploadSizeExceededError(claims.sizeBytes, totalBytes),
      });
      const key = blobKeyOf(record);
      const written = await this.context.blobs.write(key, forwardStream(body, meter));
      if (written !== claims.sizeBytes || this.context.index.find(record.id) !== record) {
        await discardBlob(this.context, key);
        if (written !== claims.sizeBytes) throw sizeShortfall(claims.sizeBytes, written);
        await this.context.records.remove(record);
        throw new FileNotFoundError();
      }
      const ready: FileRecord = { ...record, state: "ready" };
      delete ready.uploadExpires;
      await this.context.records.save(ready);
      // Deleted while the record was being written: the delete wins.
      if (this.context.index.find(record.id) !== record) {
        await discardFile(this.context, ready);
        throw new FileNotFoundError();
      }
      this.context.index.add(ready);
      return toStoredFile(ready);
    } finally {
      this.receiving.delete(record.id);
    }
  }

  async close(): Promise<void> {
    this.context.operations.close();
    await this.context.blobs.close();
  }

  /** The agent's files, after dropping presigned uploads whose link expired without bytes. */
  private async agentFiles(agentId: string): Promise<AgentFiles> {
    const agent = this.context.index.agent(agentId);
    if (agent.pending.size === 0) return agent;
    const now = Math.floor(this.context.now() / 1000);
    for (const id of [...agent.pending]) {
      const record = agent.files.get(id);
      if (!record || (record.uploadExpires ?? 0) >= now || this.receiving.has(id)) continue;
      this.context.index.delete(record);
      await discardFile(this.context, record);
    }
    return agent;
  }

  private async ownFile(agentId: string, id: string): Promise<FileRecord> {
    if (!isFileId(id)) throw new FileNotFoundError();
    const record = (await this.agentFiles(agentId)).files.get(id);
    if (!record) throw new FileNotFoundError();
    return record;
  }

  private secret(): Buffer {
    const configured = this.context.settings().signingSecret;
    if (configured !== null) return Buffer.from(configured, "utf8");
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
   * Bring the index up from the records: uploads cut short by a crash are removed with any bytes;
   * presigned uploads keep their record (while the link lives) but lose unacknowledged bytes.
   */
  private async recover(records: FileRecord[], localBlobs: boolean): Promise<void> {
    const now = Math.floor(this.context.now() / 1000);
    for (const record of records) {
      if (record.state === "ready") {
        this.context.index.add(record);
      } else if (record.state === "pending" && (record.uploadExpires ?? 0) >= now) {
        await discardBlob(this.context, blobKeyOf(record));
        this.context.index.add(record);
      } else {
        await discardFile(this.context, record);
      }
    }
    if (!localBlobs) return;
    // Local disk only: a blob without a record (a crash between a delete's two steps) is garbage,
    // and so are the temp files of writes no live process owns (the bytes of the `uploading`
    // records just dropped are there, not under their key). A shared remote bucket is never
    // swept: other data may live there.
    await this.context.blobs.sweepPartials?.(QUIET_PARTIAL_MS);
    for (const key of await this.context.blobs.keys()) {
      const [agentId, fileId, ...rest] = key.split(":");
      if (rest.length > 0 || !agentId || !fileId || !isFileId(fileId)) continue;
      const record = this.context.index.find(fileId);
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
