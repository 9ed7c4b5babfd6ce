// The typed gateway client the CLI commands (and tests) use: one method per endpoint, on top of
// HttpTransport, which owns the base URL, auth, error decoding and body kinds.
import type ContentDisposition from "content-disposition";
import { isObject } from "../json/json-values.js";
import { onFirstUse } from "../load/on-first-use.js";
import { hasControlCharacter } from "../text/control-characters.js";
import { type AnswerShape, answerShape, expectAnswer, hasData, hasList, hasString } from "./answer-shape.js";
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ModelEntry, ModelList } from "./api-types.js";
import { AudioClient } from "./audio-client.js";
import { BatchesClient } from "./batches-client.js";
import { EmbeddingsClient } from "./embeddings-client.js";
import { GwApiError, unexpectedAnswer } from "./gw-api-error.js";
import { HttpTransport, type TransportOptions } from "./http-transport.js";
import type { ImageCatalogBody, ImageEditRequest, ImageGenerationRequest, ImageResultBody, ProjectBody, ProjectListBody } from "./image-types.js";
import { multipartUpload } from "./multipart-upload.js";
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

// The answers, checked for what the client reads (answer-shape.ts).
const MODEL_LIST = answerShape("/v1/models", (body): body is ModelList => hasList(body, "data"), "unexpected /v1/models answer: no `data` list");
const MODEL_ENTRY = answerShape("/v1/models/{id}", (body): body is ModelEntry => hasString(body, "id"), "unexpected /v1/models/{id} answer: no `id`");
const CHAT_COMPLETION = answerShape(
  "chat completion",
  (body): body is ChatCompletion => hasList(body, "choices"),
  "unexpected chat completion answer: no `choices`",
);
const CHAT_CHUNK = answerShape(
  "chat stream chunk",
  (body): body is ChatCompletionChunk => hasList(body, "choices"),
  "unexpected chat stream chunk: no `choices`",
);
const PRESIGNED_UPLOAD = answerShape("presigned upload", (body): body is PresignedUploadBody => hasData(body, (data) => typeof data.uploadUrl === "string"));
const FILE_LIST = answerShape("file list", (body): body is FileListBody => isObject(body) && Array.isArray(body.data) && isObject(body.pagination));
const FILE_URL = answerShape("file url", (body): body is FileUrlBody => hasData(body, (data) => typeof data.url === "string"));
const DELETED = answerShape("delete", (body): body is MessageBody => hasString(body, "message"));
const IMAGE_CATALOG = answerShape("image catalog", (body): body is ImageCatalogBody => hasList(body, "models"));
const PROJECT_LIST = answerShape("project list", (body): body is ProjectListBody => hasList(body, "data"));
const PROJECT = answerShape("project", (body): body is ProjectBody => hasString(body, "project_id"));
const QUOTA = answerShape("quota", (body): body is StorageQuotaBody => hasData(body, (data) => typeof data.usedBytes === "number"));

function storedFile(what: string): AnswerShape<StoredFileBody> {
  return answerShape(what, (body): body is StoredFileBody => hasData(body, (data) => typeof data.id === "string"));
}

function imageResult(what: string): AnswerShape<ImageResultBody> {
  return answerShape(what, (body): body is ImageResultBody => hasList(body, "data"));
}

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
  /** Batches and their files (batches-client.ts): /v1/batches, /v1/files. */
  readonly batches: BatchesClient;

  constructor(options: TransportOptions | HttpTransport) {
    this.transport = options instanceof HttpTransport ? options : new HttpTransport(options);
    // Streamed transcription uploads go around the transport's fetch and need the key themselves.
    this.audio = new AudioClient(this.transport, { apiKey: options instanceof HttpTransport ? undefined : options.apiKey });
    // Clips come from signed links outside the transport's base URL, fetched with the same fetch.
    this.video = new VideoClient(this.transport, { fetch: options instanceof HttpTransport ? undefined : options.fetch });
    this.search = new SearchClient(this.transport);
    this.embeddings = new EmbeddingsClient(this.transport);
    this.batches = new BatchesClient(this.transport);
  }

  async listModels(options: CallOptions = {}): Promise<ModelList> {
    return this.transport.json("/v1/models", MODEL_LIST, options);
  }

  /** GET /v1/models/{id}: one model the key can call by name (`auto` included); a 404 GwApiError otherwise. */
  async retrieveModel(id: string, options: CallOptions = {}): Promise<ModelEntry> {
    return this.transport.json(`/v1/models/${encodeURIComponent(id)}`, MODEL_ENTRY, options);
  }

  async chatCompletion(body: ChatCompletionRequest, options: CallOptions = {}): Promise<ChatCompletion> {
    return this.transport.json("/v1/chat/completions", CHAT_COMPLETION, { ...options, json: { ...body, stream: false } });
  }

  /** Streamed completion: parsed chunks as they arrive, ending at `[DONE]`; an error event throws. */
  async *chatCompletionStream(body: ChatCompletionRequest, options: CallOptions = {}): AsyncGenerator<ChatCompletionChunk> {
    const events = this.transport.events("/v1/chat/completions", { ...options, json: { ...body, stream: true }, requireTerminator: true });
    for await (const event of events) yield expectAnswer(event, CHAT_CHUNK);
  }

  /** POST /v1/storage/upload: the file as multipart field `file`, streamed from `source.open()`. */
  async uploadFile(source: UploadSource, options: CallOptions = {}): Promise<StoredFileBody> {
    if (hasControlCharacter(source.contentType)) throw new GwApiError(`invalid Content-Type ${JSON.stringify(source.contentType)}`, 0);
    const upload = multipartUpload(source);
    return this.transport.sendStream("/v1/storage/upload", upload.body, storedFile("upload"), {
      method: "POST",
      headers: { "content-type": upload.contentType, "content-length": String(upload.contentLength) },
      signal: options.signal,
    });
  }

  /** POST /v1/storage/presigned-upload: the record and a one-time upload link. */
  async presignUpload(file: PresignUploadRequest, options: CallOptions = {}): Promise<PresignedUploadBody> {
    return this.transport.json("/v1/storage/presigned-upload", PRESIGNED_UPLOAD, { ...options, json: file });
  }

  /** PUT the bytes to a presigned upload link (no API key: the link is the credential). */
  async putToUploadUrl(uploadUrl: string, source: UploadSource, options: CallOptions = {}): Promise<StoredFileBody> {
    return this.transport.sendStream(uploadUrl, source.open(), storedFile("presigned upload"), {
      method: "PUT",
      headers: { "content-type": source.contentType, "content-length": String(source.sizeBytes) },
      signal: options.signal,
      auth: false,
    });
  }

  /** Presign (the record exists at once), then PUT the bytes to the signed link: the two-step upload. */
  async uploadFilePresigned(source: UploadSource, options: CallOptions = {}): Promise<StoredFileBody> {
    const presigned = await this.presignUpload({ filename: source.filename, contentType: source.contentType, sizeBytes: source.sizeBytes }, options);
    return this.putToUploadUrl(presigned.data.uploadUrl, source, options);
  }

  async listFiles(query: FileListQuery = {}, options: CallOptions = {}): Promise<FileListBody> {
    return this.transport.json("/v1/storage/files", FILE_LIST, { ...options, query });
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
    return namingFile(id, this.transport.json(`/v1/storage/files/${encodeURIComponent(id)}/url`, FILE_URL, options));
  }

  async deleteFile(id: string, options: CallOptions = {}): Promise<MessageBody> {
    return namingFile(id, this.transport.json(`/v1/storage/files/${encodeURIComponent(id)}`, DELETED, { ...options, method: "DELETE" }));
  }

  /** POST /v1/image/generations: the image result, pictures as base64. */
  async generateImages(body: ImageGenerationRequest, options: CallOptions = {}): Promise<ImageResultBody> {
    return this.transport.json("/v1/image/generations", imageResult("image generation"), { ...options, json: body });
  }

  /** POST /v1/image/edits in its JSON form: the same image result as a generation. */
  async editImages(body: ImageEditRequest, options: CallOptions = {}): Promise<ImageResultBody> {
    return this.transport.json("/v1/image/edits", imageResult("image edit"), { ...options, json: body });
  }

  /** GET /v1/public/image-models (no key needed). */
  async imageCatalog(options: CallOptions = {}): Promise<ImageCatalogBody> {
    return this.transport.json("/v1/public/image-models", IMAGE_CATALOG, { ...options, auth: false });
  }

  async listProjects(options: CallOptions = {}): Promise<ProjectListBody> {
    return this.transport.json("/v1/projects", PROJECT_LIST, options);
  }

  async createProject(name: string, options: CallOptions = {}): Promise<ProjectBody> {
    return this.transport.json("/v1/projects", PROJECT, { ...options, json: { name } });
  }

  async storageQuota(options: CallOptions = {}): Promise<StorageQuotaBody> {
    return (await this.storageLimits(options)).quota;
  }

  /** GET /v1/storage/quota: the quota, and the per-file limit the gateway sends beside it. */
  async storageLimits(options: CallOptions = {}): Promise<StorageLimits> {
    const response = await this.transport.request("/v1/storage/quota", { ...options, headers: { accept: "application/json" } });
    const quota = expectAnswer(await readJsonBody(response, "quota"), QUOTA);
    const count = (header: string) => {
      const value = Number(response.headers.get(header) ?? Number.NaN);
      return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
    };
    const maxFileBytes = count(MAX_FILE_BYTES_HEADER);
    const used = count(OPERATIONS_USED_HEADER);
    const limit = count(OPERATIONS_LIMIT_HEADER);
    const period = response.headers.get(OPERATIONS_PERIOD_HEADER);
    return {
      quota,
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

/** CommonJS, read only for a download's name: required then, not at every command's start. */
const contentDisposition = onFirstUse<typeof ContentDisposition>("content-disposition");

function filenameOf(header: string | null): string | undefined {
  if (!header) return undefined;
  try {
    const filename = contentDisposition().parse(header).parameters.filename;
    return typeof filename === "string" ? filename : undefined;
  } catch {
    return undefined;
  }
}
