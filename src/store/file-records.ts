// Stored-file records: one small JSON file per stored file, `<dir>/<agent id>/<file id>.json`.
//
// Why not one document for all of them (metadata.json) or one per agent: every upload or delete
// would rewrite a file that grows with the agent's history (docs/decisions.md §1). One record per file makes
// every change O(1): a new record is an atomic create (temp file, fsync, rename), a delete is an
// unlink, and no lock is needed because only the server writes records and ids are unique.
// The directory is read once at start to build the in-memory index (lists, used bytes); nothing
// scans it per request. Only ids the gateway generated ever become file names.
import { promises as fs, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { writeFileAtomically } from "./atomic-write.js";
import { StoreError } from "./store-error.js";

/**
 * `uploading`: a multipart upload in progress (its bytes may be partly written);
 * `pending`: a presigned upload whose bytes have not arrived yet; `ready`: bytes stored.
 */
export type FileState = "uploading" | "pending" | "ready";

/** What a client may upload a file for through OpenAI's Files API (`POST /v1/files`); the other ways of storing a file set none. */
export const UPLOAD_PURPOSES = ["assistants", "batch", "fine-tune", "vision", "user_data", "evals"] as const;
export type UploadPurpose = (typeof UPLOAD_PURPOSES)[number];
/** What a stored file may be for: an upload's purpose, or `batch_output` for the files a batch writes. */
export const FILE_PURPOSES = [...UPLOAD_PURPOSES, "batch_output"] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

export function isFilePurpose(value: unknown): value is FilePurpose {
  return typeof value === "string" && (FILE_PURPOSES as readonly string[]).includes(value);
}

export function isUploadPurpose(value: unknown): value is UploadPurpose {
  return typeof value === "string" && (UPLOAD_PURPOSES as readonly string[]).includes(value);
}

export interface FileRecord {
  id: string;
  agentId: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  createdAt: string;
  state: FileState;
  /** `pending` only: unix seconds after which the upload link is refused and the record dropped. */
  uploadExpires?: number;
  /** A picture the gateway drew (a library asset): where it belongs and how it was made. */
  image?: ImageAssetInfo;
  /** Set by `POST /v1/files` only. */
  purpose?: FilePurpose;
}

export interface ImageAssetInfo {
  projectId: string;
  /** The asset this picture was drawn from or after (its lineage); absent for a first picture. */
  parentAssetId?: string;
  model: string;
  prompt: string;
}

const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export class FileRecordStore {
  private constructor(readonly directory: string) {}

  /**
   * Read every record, in id order (creation order). A record that does not parse refuses the
   * start (restore it, or delete it). Read synchronously: a start has nothing else to do
   * meanwhile, and 100,000 small files read one syscall after another take seconds where the
   * promise API's four round trips through the thread pool per file took half a minute.
   */
  static async open(directory: string): Promise<{ store: FileRecordStore; records: FileRecord[] }> {
    mkdirSync(directory, { recursive: true });
    const records: FileRecord[] = [];
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const agentId = entry.name;
      if (!NAME_PATTERN.test(agentId)) continue;
      const agentDirectory = path.join(directory, agentId);
      // A link is followed, as a stat would.
      if (!entry.isDirectory() && !(entry.isSymbolicLink() && statSync(agentDirectory).isDirectory())) continue;
      for (const name of readdirSync(agentDirectory)) {
        const file = path.join(agentDirectory, name);
        // A temp file is a write that never completed (the process died before its rename).
        if (name.endsWith(".tmp")) {
          rmSync(file, { force: true });
          continue;
        }
        if (!name.endsWith(".json")) continue;
        records.push(parseRecord(readFileSync(file, "utf8"), file, agentId, name.slice(0, -".json".length)));
      }
    }
    // In id order, so that the index is built by appending rather than by inserting into the middle.
    records.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { store: new FileRecordStore(directory), records };
  }

  /** Create or replace a record atomically; resolves once it is on disk. */
  async save(record: FileRecord): Promise<void> {
    await writeFileAtomically(this.fileOf(record), `${JSON.stringify(record)}\n`);
  }

  async remove(record: Pick<FileRecord, "agentId" | "id">): Promise<void> {
    await fs.rm(this.fileOf(record), { force: true });
  }

  private fileOf(record: Pick<FileRecord, "agentId" | "id">): string {
    if (!NAME_PATTERN.test(record.agentId) || !NAME_PATTERN.test(record.id)) throw new Error(`invalid file record id ${record.agentId}/${record.id}`);
    return path.join(this.directory, record.agentId, `${record.id}.json`);
  }
}

function parseRecord(text: string, file: string, agentId: string, id: string): FileRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new StoreError(`file record ${file} is corrupt; refusing to start — restore it from a backup or delete it (and its blob)`);
  }
  const record = value as Partial<FileRecord> | null;
  const valid =
    record !== null &&
    typeof record === "object" &&
    record.id === id &&
    record.agentId === agentId &&
    typeof record.filename === "string" &&
    typeof record.contentType === "string" &&
    Number.isSafeInteger(record.sizeBytes) &&
    (record.sizeBytes ?? -1) >= 0 &&
    typeof record.createdAt === "string" &&
    (record.state === "uploading" || record.state === "pending" || record.state === "ready") &&
    (record.uploadExpires === undefined || Number.isSafeInteger(record.uploadExpires)) &&
    (record.image === undefined || validImageInfo(record.image)) &&
    (record.purpose === undefined || isFilePurpose(record.purpose));
  if (!valid) throw new StoreError(`file record ${file} is not a gw file record; refusing to start — restore it from a backup or delete it`);
  return record as FileRecord;
}

function validImageInfo(info: Partial<ImageAssetInfo> | null): boolean {
  return (
    info !== null &&
    typeof info === "object" &&
    typeof info.projectId === "string" &&
    (info.parentAssetId === undefined || typeof info.parentAssetId === "string") &&
    typeof info.model === "string" &&
    typeof info.prompt === "string"
  );
}
