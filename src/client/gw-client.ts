// The typed gateway client the CLI commands (and tests) use: one method per endpoint, on top of
// HttpTransport, which owns the base URL, auth, error decoding and body kinds.
import { parse as parseContentDisposition } from "content-disposition";
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ModelEntry, ModelList } from "./api-types.js";
import { AudioClient } from "./audio-client.js";
import { EmbeddingsClient } from "./embeddings-client.js";
import { formFilename, rfc5987 } from "./form-filename.js";
import { GwApiError, isRecord, unexpectedAnswer } from "./gw-api-error.js";
import { HttpTransport, type TransportOptions } from "./http-transport.js";
import type { ImageCatalogBody, ImageEditRequest, ImageGenerationRequest, ImageResultBody, ProjectBody, ProjectListBody } from "./image-types.js";
import { SearchClient } from "./search-client.js";
import {
  type FileDownload,
  type FileListBody,
  type FileListQuery,
  type FileUrlBody,
  MAX_FILE_BYTES_HEADER,
  type MessageBody,
  OPERATIONS_LIMIT_HEADER,
  OPERATIONS_PERIOD_HEADER,
  OPERATIONS_USED_HEADER,
  type PresignedUploadBody,
  type PresignUploadRequest,
  type StorageLimits,
  type StorageQuotaBody,
  type StoredFileBody,
  type UploadSource,
} from "./storage-types.js";
import { VideoClient } from "./video-client.js";

export interface CallOptions {
  signal?: AbortSignal;
}

export class GwClient {
  readonly transport: HttpTransport;
  /** The audio endpoints (audio-client.ts): transcription, speech, voices, the audio catalog. */
  readonly audio: AudioClient;
  /** The video endpoints (video-client.ts): submit, poll, cancel and list jobs, the clip, the video catalog. */
  readonly video: VideoClient;
  /** Web search (search-client.ts): POST /v1/search. */
  readonly search: SearchClient;
  /** Embedding vectors (embeddings-client.ts): POST /v1/embeddings. */
  readonly embeddings: EmbeddingsClient;

  constructor(options: TransportOptions | HttpTransport) {
    this.transport = options instanceof HttpTransport ? options : new HttpTransport(options);
    // Streamed transcription uploads go around the transport's fetch and need the key themselves.
    this.audio = new AudioClient(this.transport, { apiKey: options instanceof HttpTransport ? undefined : options.apiKey });
    // Clips come from signed links outside the transport's base URL, fetched with the same fetch.
    this.video = new VideoClient(this.transport, { fetch: options instanceof HttpTransport ? undefined : options.fetch });
    this.search = new SearchClient(this.transport);
    this.embeddings = new EmbeddingsClient(this.transport);
  }

  async listModels(options: CallOptions = {}): Promise<ModelList> {
    const body = await this.transport.json<unknown>("/v1/models", options);
    if (!isRecord(body) || !Array.isArray(body.data))
      throw new GwApiError("unexpected /v1/models answer: no `data` list", 200, undefined, undefined, undefined, body);
    return body as unknown as ModelList;
  }

  /** GET /v1/models/{id}: one model the key can call by name (`auto` included); a 404 GwApiError otherwise. */
  async retrieveModel(id: string, options: CallOptions = {}): Promise<ModelEntry> {
    const body = await this.transport.json<unknown>(`/v1/models/${encodeURIComponent(id)}`, options);
    if (!isRecord(body) || typeof body.id !== "string")
      throw new GwApiError("unexpected /v1/models/{id} answer: no `id`", 200, undefined, undefined, undefined, body);
    return body as unknown as ModelEntry;
  }

  async chatCompletion(body: ChatCompletionRequest, options: CallOptions = {}): Promise<ChatCompletion> {
    const answer = await this.transport.json<unknown>("/v1/chat/completions", { ...options, json: { ...body, stream: false } });
    if (!isRecord(answer) || !Array.isArray(answer.choices))
      throw new GwApiError("unexpected chat completion answer: no `choices`", 200, undefined, undefined, undefined, answer);
    return answer as unknown as ChatCompletion;
  }

  /** Streamed completion: parsed chunks as they arrive, ending at `[DONE]`; an error event throws. */
  async *chatCompletionStream(body: ChatCompletionRequest, options: CallOptions = {}): AsyncGenerator<ChatCompletionChunk> {
    const events = this.transport.events("/v1/chat/completions", { ...options, json: { ...body, stream: true }, requireTerminator: true });
    for await (const event of events) {
      if (!isRecord(event) || !Array.isArray(event.choices))
        throw new GwApiError("unexpected chat stream chunk: no `choices`", 200, undefined, undefined, undefined, event);
      yield event as unknown as ChatCompletionChunk;
    }
  }

  /** POST /v1/storage/upload: the file as multipart field `file`, streamed from `source.open()`. */
  async uploadFile(source: UploadSource, options: CallOptions = {}): Promise<StoredFileBody> {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
    if (/[\u0000-\u001f\u007f]/.test(source.contentType)) throw new GwApiError(`invalid Content-Type ${JSON.stringify(source.contentType)}`, 0);
    const boundary = `gw-${crypto.randomUUID()}`;
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${formFilename(source.filename)}"; filename*=UTF-8''${rfc5987(source.filename)}\r\n` +
        `Content-Type: ${source.contentType}\r\n\r\n`,
    );
    const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
    const answer = await this.transport.sendStream("/v1/storage/upload", framed(head, source.open(), tail), {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(head.length + source.sizeBytes + tail.length) },
      signal: options.signal,
    });
    return storedFileBody(answer, "upload");
  }

  /** POST /v1/storage/presigned-upload: the record and a one-time upload link. */
  async presignUpload(file: PresignUploadRequest, options: CallOptions = {}): Promise<PresignedUploadBody> {
    const answer = await this.transport.json<unknown>("/v1/storage/presigned-upload", { ...options, json: file });
    if (!isRecord(answer) || !isRecord(answer.data) || typeof answer.data.uploadUrl !== "string") throw unexpectedAnswer("presigned upload", answer);
    return answer as unknown as PresignedUploadBody;
  }

  /** PUT the bytes to a presigned upload link (no API key: the link is the credential). */
  async putToUploadUrl(uploadUrl: string, source: UploadSource, options: CallOptions = {}): Promise<StoredFileBody> {
    const answer = await this.transport.sendStream(uploadUrl, source.open(), {
      method: "PUT",
      headers: { "content-type": source.contentType, "content-length": String(source.sizeBytes) },
      signal: options.signal,
      auth: false,
    });
    return storedFileBody(answer, "presigned upload");
  }

  /** Presign (the record exists at once), then PUT the bytes to the signed link: the two-step upload. */
  async uploadFilePresigned(source: UploadSource, options: CallOptions = {}): Promise<StoredFileBody> {
    const presigned = await this.presignUpload({ filename: source.filename, contentType: source.contentType, sizeBytes: source.sizeBytes }, options);
    return this.putToUploadUrl(presigned.data.uploadUrl, source, options);
  }

  async listFiles(query: FileListQuery = {}, options: CallOptions = {}): Promise<FileListBody> {
    const answer = await this.transport.json<unknown>("/v1/storage/files", { ...options, query });
    if (!isRecord(answer) || !Array.isArray(answer.data) || !isRecord(answer.pagination)) throw unexpectedAnswer("file list", answer);
    return answer as unknown as FileListBody;
  }

  /** GET /v1/storage/files/:id, following its redirect to the signed link; the bytes stream. */
  async downloadFile(id: string, options: CallOptions = {}): Promise<FileDownload> {
    const response = await namingFile(id, this.transport.request(`/v1/storage/files/${encodeURIComponent(id)}`, options));
    if (!response.body) throw new GwApiError("the gateway sent no file body", response.status);
    const length = response.headers.get("content-length");
    return {
      filename: filenameOf(response.headers.get("content-disposition")),
      contentType: response.headers.get("content-type") ?? "application/octet-stream",
      sizeBytes: length === null ? undefined : Number(length),
      body: response.body,
    };
  }

  async fileUrl(id: string, options: CallOptions = {}): Promise<FileUrlBody> {
    const answer = await namingFile(id, this.transport.json<unknown>(`/v1/storage/files/${encodeURIComponent(id)}/url`, options));
    if (!isRecord(answer) || !isRecord(answer.data) || typeof answer.data.url !== "string") throw unexpectedAnswer("file url", answer);
    return answer as unknown as FileUrlBody;
  }

  async deleteFile(id: string, options: CallOptions = {}): Promise<MessageBody> {
    const answer = await namingFile(id, this.transport.json<unknown>(`/v1/storage/files/${encodeURIComponent(id)}`, { ...options, method: "DELETE" }));
    if (!isRecord(answer) || typeof answer.message !== "string") throw unexpectedAnswer("delete", answer);
    return answer as unknown as MessageBody;
  }

  /** POST /v1/image/generations: the image result, pictures as base64. */
  async generateImages(body: ImageGenerationRequest, options: CallOptions = {}): Promise<ImageResultBody> {
    const answer = await this.transport.json<unknown>("/v1/image/generations", { ...options, json: body });
    if (!isRecord(answer) || !Array.isArray(answer.data)) throw unexpectedAnswer("image generation", answer);
    return answer as unknown as ImageResultBody;
  }

  /** POST /v1/image/edits in its JSON form: the same image result as a generation. */
  async editImages(body: ImageEditRequest, options: CallOptions = {}): Promise<ImageResultBody> {
    const answer = await this.transport.json<unknown>("/v1/image/edits", { ...options, json: body });
    if (!isRecord(answer) || !Array.isArray(answer.data)) throw unexpectedAnswer("image edit", answer);
    return answer as unknown as ImageResultBody;
  }

  /** GET /v1/public/image-models (no key needed). */
  async imageCatalog(options: CallOptions = {}): Promise<ImageCatalogBody> {
    const answer = await this.transport.json<unknown>("/v1/public/image-models", { ...options, auth: false });
    if (!isRecord(answer) || !Array.isArray(answer.models)) throw unexpectedAnswer("image catalog", answer);
    return answer as unknown as ImageCatalogBody;
  }

  async listProjects(options: CallOptions = {}): Promise<ProjectListBody> {
    const answer = await this.transport.json<unknown>("/v1/projects", options);
    if (!isRecord(answer) || !Array.isArray(answer.data)) throw unexpectedAnswer("project list", answer);
    return answer as unknown as ProjectListBody;
  }

  async createProject(name: string, options: CallOptions = {}): Promise<ProjectBody> {
    const answer = await this.transport.json<unknown>("/v1/projects", { ...options, json: { name } });
    if (!isRecord(answer) || typeof answer.project_id !== "string") throw unexpectedAnswer("project", answer);
    return answer as unknown as ProjectBody;
  }

  async storageQuota(options: CallOptions = {}): Promise<StorageQuotaBody> {
    return (await this.storageLimits(options)).quota;
  }

  /** GET /v1/storage/quota: the quota, and the per-file limit the gateway sends beside it. */
  async storageLimits(options: CallOptions = {}): Promise<StorageLimits> {
    const response = await this.transport.request("/v1/storage/quota", { ...options, headers: { accept: "application/json" } });
    const answer = await readJsonBody(response, "quota");
    if (!isRecord(answer) || !isRecord(answer.data) || typeof answer.data.usedBytes !== "number") throw unexpectedAnswer("quota", answer);
    const count = (header: string) => {
      const value = Number(response.headers.get(header) ?? Number.NaN);
      return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
    };
    const maxFileBytes = count(MAX_FILE_BYTES_HEADER);
    const used = count(OPERATIONS_USED_HEADER);
    const limit = count(OPERATIONS_LIMIT_HEADER);
    const period = response.headers.get(OPERATIONS_PERIOD_HEADER);
    return {
      quota: answer as unknown as StorageQuotaBody,
      maxFileBytes: maxFileBytes !== undefined && maxFileBytes > 0 ? maxFileBytes : undefined,
      operations: used !== undefined && limit !== undefined && period ? { used, limit, period } : undefined,
    };
  }
}

/**
 * The storage endpoints answer a missing file with a bare "File not found."; a command given
 * several ids, or a script's log, needs to know which one.
 */
async function namingFile<T>(id: string, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof GwApiError && error.status === 404) {
      throw new GwApiError(`${error.message.replace(/\.$/, "")}: ${id}`, error.status, error.type, error.code, error.requestId, error.body);
    }
    throw error;
  }
}

async function readJsonBody(response: Response, what: string): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw unexpectedAnswer(what, text.slice(0, 200));
  }
}

function storedFileBody(answer: unknown, what: string): StoredFileBody {
  if (!isRecord(answer) || !isRecord(answer.data) || typeof answer.data.id !== "string") throw unexpectedAnswer(what, answer);
  return answer as unknown as StoredFileBody;
}

function filenameOf(header: string | null): string | undefined {
  if (!header) return undefined;
  try {
    const filename = parseContentDisposition(header).parameters.filename;
    return typeof filename === "string" ? filename : undefined;
  } catch {
    return undefined;
  }
}

/** The multipart framing around the file's bytes, in order, as they are read. */
async function* framed(head: Uint8Array, body: AsyncIterable<Uint8Array>, tail: Uint8Array): AsyncGenerator<Uint8Array> {
  yield head;
  yield* body;
  yield tail;
}
