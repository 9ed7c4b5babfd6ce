// OpenAI's Files API over the agent's own storage, without HTTP (server/routes/files.ts serves it;
// other features, a batch's input and output, call it directly). A file here is one of the
// agent's ready stored files under the same id as in /v1/storage: one id space, one quota, the
// same counted operations. A presigned upload still waiting for its bytes is no file yet; a file
// stored without a purpose (/v1/storage, a generated picture) is `user_data`.
import type { Readable } from "node:stream";
import type { FilePurpose, FileRecord } from "../../store/file-records.js";
import type { FileListQuery } from "./openai-files-requests.js";
import type { StorageLimits } from "./storage-context.js";
import { FileNotFoundError } from "./storage-errors.js";
import type { StorageService } from "./storage-service.js";

export interface OpenAIFileObject {
  id: string;
  object: "file";
  bytes: number;
  /** Unix seconds. */
  created_at: number;
  filename: string;
  purpose: FilePurpose;
  /** Stored files need no processing. */
  status: "processed";
  /** Files are kept until deleted (`expires_after` is refused). */
  expires_at: null;
  status_details: null;
}

export interface OpenAIFileList {
  object: "list";
  data: OpenAIFileObject[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface OpenAIFileDeleted {
  id: string;
  object: "file";
  deleted: true;
}

export interface OpenAIFileContent {
  file: OpenAIFileObject;
  contentType: string;
  body: Readable;
  sizeBytes: number;
}

/** What a purpose-less file (stored through /v1/storage, or generated) is listed as. */
export const DEFAULT_FILE_PURPOSE: FilePurpose = "user_data";

/** The most records read in one round trip while a list looks for files of a purpose (or past pending uploads). */
const LIST_READ_BATCH = 1000;

export function toFileObject(file: Pick<FileRecord, "id" | "filename" | "sizeBytes" | "createdAt" | "purpose">): OpenAIFileObject {
  return {
    id: file.id,
    object: "file",
    bytes: file.sizeBytes,
    created_at: Math.floor(Date.parse(file.createdAt) / 1000),
    filename: file.filename,
    purpose: file.purpose ?? DEFAULT_FILE_PURPOSE,
    status: "processed",
    expires_at: null,
    status_details: null,
  };
}

export class OpenAIFiles {
  constructor(private readonly storage: StorageService) {}

  /** Store bytes the gateway made as one of the agent's files with a purpose: metered and counted like an upload, streamed. */
  async store(
    agentId: string,
    limits: StorageLimits,
    file: { filename: string; contentType: string; body: Readable; purpose: FilePurpose },
  ): Promise<OpenAIFileObject> {
    return toFileObject({ ...(await this.storage.storeStream(agentId, limits, file)), purpose: file.purpose });
  }

  /** 404 (the same for a missing, foreign, malformed or still pending id) unless it is one of the agent's files. */
  async retrieve(agentId: string, id: string): Promise<OpenAIFileObject> {
    return toFileObject(await this.ownFile(agentId, id));
  }

  /**
   * One page by OpenAI's cursor: the agent's files in creation order (`desc`: newest first) past
   * `after`, of `purpose` when given. One more than `limit` is looked for, to say whether more follow.
   */
  async list(agentId: string, query: FileListQuery): Promise<OpenAIFileList> {
    const wanted = query.limit + 1;
    const found: FileRecord[] = [];
    let after = query.after;
    let batch = wanted;
    for (;;) {
      const page = await this.storage.listFrom(agentId, { after, limit: Math.min(LIST_READ_BATCH, batch), order: query.order });
      for (const record of page.records) if (isListed(record, query.purpose)) found.push(record);
      const last = page.records.at(-1);
      if (found.length >= wanted || !page.hasMore || !last) break;
      after = last.id;
      // Records were passed over (another purpose, uploads waiting for bytes): read more at a time.
      batch = Math.max(wanted - found.length, batch * 2);
    }
    const data = found.slice(0, query.limit).map(toFileObject);
    return { object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: found.length > query.limit };
  }

  /** The file's bytes, streamed, with its type and size; checked before an answer starts. */
  async openContent(agentId: string, id: string, requestId?: string): Promise<OpenAIFileContent> {
    const opened = await this.storage.openFile(agentId, id, requestId);
    return { file: toFileObject(opened.file), contentType: opened.file.contentType, body: opened.body, sizeBytes: opened.sizeBytes };
  }

  /** Delete the file (bytes, record, links): one counted storage operation, as DELETE /v1/storage/files/{id}. */
  async remove(agentId: string, limits: StorageLimits, id: string): Promise<OpenAIFileDeleted> {
    const record = await this.ownFile(agentId, id);
    await this.storage.remove(agentId, limits, record.id);
    return { id: record.id, object: "file", deleted: true };
  }

  private async ownFile(agentId: string, id: string): Promise<FileRecord> {
    const record = await this.storage.findFile(agentId, id);
    if (!record) throw new FileNotFoundError();
    return record;
  }
}

function isListed(record: FileRecord, purpose: FilePurpose | undefined): boolean {
  return record.state === "ready" && (purpose === undefined || (record.purpose ?? DEFAULT_FILE_PURPOSE) === purpose);
}
