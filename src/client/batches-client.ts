// The Batch API for the client (`gw batch`), on GwClient's transport: the input uploaded as a
// file of purpose `batch` (POST /v1/files), the batch created, read, listed and cancelled
// (/v1/batches), followed until it ends (waitForBatch), and its output or error file read back
// (GET /v1/files/{id}/content). OpenAI's wire format throughout, as the official SDK speaks it.
import { type AnswerShape, answerShape, hasList, hasString } from "./answer-shape.js";
import { type BatchBody, type BatchCreateRequest, type BatchListBody, type FileObjectBody, isEndedBatch } from "./batch-types.js";
import { GwApiError } from "./gw-api-error.js";
import type { HttpTransport } from "./http-transport.js";
import { multipartUpload } from "./multipart-upload.js";
import { type PollOptions, pollUntil } from "./poll-until.js";
import type { FileDownload, UploadSource } from "./storage-types.js";

export interface BatchCallOptions {
  signal?: AbortSignal;
}

export type BatchWaitOptions = Partial<PollOptions<BatchBody>>;

const BATCHES_PATH = "/v1/batches";
const BATCH_LIST = answerShape("batch list", (body): body is BatchListBody => hasList(body, "data"));
const FILE_OBJECT = answerShape("file upload", (body): body is FileObjectBody => hasString(body, "id") && (body as { object?: unknown }).object === "file");

export class BatchesClient {
  constructor(private readonly transport: HttpTransport) {}

  /** POST /v1/files with `purpose=batch`: the input file, streamed from `source.open()`. */
  async uploadInput(source: UploadSource, options: BatchCallOptions = {}): Promise<FileObjectBody> {
    const upload = multipartUpload(source, [["purpose", "batch"]]);
    return this.transport.sendStream("/v1/files", upload.body, FILE_OBJECT, {
      method: "POST",
      headers: { "content-type": upload.contentType, "content-length": String(upload.contentLength) },
      signal: options.signal,
    });
  }

  /** POST /v1/batches: the new batch, `in_progress`, or `failed` with its input's problems in `errors`. */
  async create(request: BatchCreateRequest, options: BatchCallOptions = {}): Promise<BatchBody> {
    return this.transport.json(BATCHES_PATH, batchShape("batch create"), { json: request, signal: options.signal });
  }

  /** GET /v1/batches/{id}. */
  async retrieve(id: string, options: BatchCallOptions = {}): Promise<BatchBody> {
    return this.transport.json(batchPath(id), batchShape("batch"), { signal: options.signal });
  }

  /** GET /v1/batches: the caller's batches, newest first (limit 1 to 100, default 20; `after` a batch id). */
  async list(query: { limit?: number; after?: string } = {}, options: BatchCallOptions = {}): Promise<BatchListBody> {
    return this.transport.json(BATCHES_PATH, BATCH_LIST, { signal: options.signal, query: { limit: query.limit, after: query.after } });
  }

  /** POST /v1/batches/{id}/cancel: the batch, `cancelling` (or as it was when already cancelled); an ended one is refused (409). */
  async cancel(id: string, options: BatchCallOptions = {}): Promise<BatchBody> {
    return this.transport.json(`${batchPath(id)}/cancel`, batchShape("batch cancel"), { method: "POST", signal: options.signal });
  }

  /** DELETE /v1/files/{id}: an input file no batch was made from. */
  async deleteFile(id: string, options: BatchCallOptions = {}): Promise<void> {
    await this.transport.request(`/v1/files/${encodeURIComponent(id)}`, { method: "DELETE", signal: options.signal });
  }

  /** GET /v1/files/{id}/content: a file's bytes (a batch's output or error file), streamed. */
  async fileContent(id: string, options: BatchCallOptions = {}): Promise<FileDownload> {
    const response = await this.transport.request(`/v1/files/${encodeURIComponent(id)}/content`, { signal: options.signal });
    if (!response.body) throw new GwApiError(`the gateway sent no content for ${id}`, response.status);
    const length = response.headers.get("content-length");
    return {
      filename: undefined,
      contentType: response.headers.get("content-type") ?? "application/octet-stream",
      sizeBytes: length === null ? undefined : Number(length),
      body: response.body,
    };
  }

  /**
   * Poll the batch every `intervalSeconds` (1 by default) until it has ended (completed, failed,
   * expired or cancelled) and answer that last state; passing failures are retried (poll-until.ts).
   * `signal` stops waiting; the batch goes on.
   */
  async waitForBatch(id: string, options: BatchWaitOptions = {}): Promise<BatchBody> {
    return pollUntil((signal) => this.retrieve(id, { signal }), isEndedBatch, { ...options, intervalSeconds: options.intervalSeconds ?? 1 });
  }
}

function batchPath(id: string): string {
  return `${BATCHES_PATH}/${encodeURIComponent(id)}`;
}

function batchShape(what: string): AnswerShape<BatchBody> {
  return answerShape(
    what,
    (body): body is BatchBody => hasString(body, "id") && hasString(body, "status") && (body as { object?: unknown }).object === "batch",
  );
}
