// One multipart upload: receive the file part (intent record, then the bytes, metered against
// the quota as they pass), then commit it once the whole form has been read, or abort it.
// An aborted or failed upload leaves no blob, no record, no reservation and no counted
// operation. The intent record (state `uploading`) is written before any byte, so a crash
// mid-upload is cleaned up at the next start whatever the blob driver.
import type { Readable } from "node:stream";
import { forwardStream } from "../../blobs/blob-store.js";
import type { FilePurpose, FileRecord, ImageAssetInfo } from "../../store/file-records.js";
import { normalizeContentType } from "./content-type.js";
import { normalizeFilename } from "./file-name.js";
import { blobKeyOf, discardFile, type OperationSlot, type StorageContext, type StorageLimits } from "./storage-context.js";
import { FileTooLargeError, StorageQuotaExceededError, StorageRequestError } from "./storage-errors.js";
import { newFileId, type StoredFile, toStoredFile } from "./stored-file.js";
import { UploadMeter } from "./upload-meter.js";

export interface IncomingFile {
  /** As the client sent it; normalized here. */
  filename: string | undefined;
  contentType: string;
  body: Readable;
}

export class UploadSession {
  private record: FileRecord | null = null;
  private meter: UploadMeter | null = null;
  private sizeBytes = 0;
  private settled = false;

  constructor(
    private readonly context: StorageContext,
    private readonly agentId: string,
    private readonly limits: StorageLimits,
    private readonly operation: OperationSlot,
  ) {}

  /** Store the file's bytes (not yet visible). Throws 413 for a file too large or over quota. */
  async receive(file: IncomingFile): Promise<void> {
    if (this.record || this.settled) throw new StorageRequestError("Send exactly one file part, named `file`.", "duplicate_file");
    const contentType = normalizeContentType(file.contentType);
    if (contentType === null) throw new StorageRequestError("The file part's Content-Type is not a valid MIME type.", "invalid_content_type");
    const now = this.context.now();
    const record: FileRecord = {
      id: newFileId(now),
      agentId: this.agentId,
      filename: normalizeFilename(file.filename),
      contentType,
      sizeBytes: 0,
      createdAt: new Date(now).toISOString(),
      state: "uploading",
    };
    this.record = record;
    await this.context.files.save(record);
    const maxBytes = this.context.settings().maxFileBytes;
    const files = this.context.files;
    const meter = new UploadMeter({
      maxBytes,
      // The multipart parser stops a file part at maxBytes + 1; this only guards the unexpected.
      hardCapBytes: maxBytes + 1,
      grantStepBytes: files.grantStepBytes,
      grant: async (minBytes, wantBytes) => {
        const grant = await files.grantBytes(this.agentId, record.id, minBytes, wantBytes, this.limits.storageBytes);
        return grant.ok ? grant.grantedBytes : null;
      },
      giveBack: () => files.returnBytes(this.agentId, record.id),
      errorFor: async (failure, totalBytes) => {
        if (failure === "too-large") return new FileTooLargeError(maxBytes);
        const space = await files.space(this.agentId);
        return new StorageQuotaExceededError({ ...space, limitBytes: this.limits.storageBytes, fileBytes: totalBytes });
      },
    });
    this.meter = meter;
    this.sizeBytes = await this.context.blobs.write(blobKeyOf(record), forwardStream(file.body, meter));
  }

  get received(): boolean {
    return this.record !== null;
  }

  /**
   * Make the stored file visible and count the operation. `purpose` (OpenAI's Files API) is known
   * only here: a form may send it after the file's bytes.
   */
  async commit(extra: { image?: ImageAssetInfo; purpose?: FilePurpose } = {}): Promise<StoredFile> {
    if (!this.record || !this.meter || this.settled) throw new StorageRequestError("The upload has no `file` part.", "file_required");
    const ready: FileRecord = { ...this.record, sizeBytes: this.sizeBytes, state: "ready" };
    if (extra.image !== undefined) ready.image = extra.image;
    if (extra.purpose !== undefined) ready.purpose = extra.purpose;
    // From granted to used in one step: no moment where the bytes count twice or not at all.
    await this.context.files.save(ready, { grant: ready.id });
    this.settled = true;
    this.meter.settle();
    await this.operation.commit("upload", ready.id);
    return toStoredFile(ready);
  }

  private readonly warn = (error: unknown) => this.context.logger.warn(`storage: an aborted upload's space or operation was not given back: ${String(error)}`);

  /** Undo everything: safe at any point, and more than once. */
  async abort(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await Promise.all([this.meter?.giveBack().catch(this.warn), this.operation.release().catch(this.warn)]);
    if (this.record) await discardFile(this.context, this.record);
  }
}
