// Stored Responses API responses (docs/decisions.md §19): one JSON document per response,
// `<dir>/<response id>.json`, holding the Response as it was answered and the input items the
// model saw (a previous response's conversation included), so that `previous_response_id`
// continues the conversation on any upstream and `input_items` lists it. Written after the
// answer, without fsync: a stored response is conversation state, not money, and a crash may
// lose the last few (a rename keeps every file whole). Behind ResponseStore, so another backend
// (Redis, for several instances) can take its place.
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { isObject, type Json } from "../json/json-values.js";

export interface StoredResponse {
  id: string;
  agentId: string;
  /** Seconds since the epoch, as the Response's created_at. */
  createdAt: number;
  /** The Response object as the client got it. */
  response: Json;
  /** The input items the model saw, in order, each with an id. */
  input: Json[];
}

export interface ResponseStore {
  save(record: StoredResponse): Promise<void>;
  /** undefined when no response has this id (or the id is not one gw makes). */
  get(id: string): Promise<StoredResponse | undefined>;
  /** Whether there was one to delete. */
  delete(id: string): Promise<boolean>;
  /** Remove responses created before `before` (seconds since the epoch); how many were removed. */
  prune(before: number): Promise<number>;
}

/** `resp_` and 48 hex digits: the only names that become file names. */
const RESPONSE_ID = /^resp_[0-9a-f]{48}$/;

export function isResponseId(id: string): boolean {
  return RESPONSE_ID.test(id);
}

export class FileResponseStore implements ResponseStore {
  private ready: Promise<unknown> | undefined;

  constructor(private readonly dir: string) {}

  async save(record: StoredResponse): Promise<void> {
    this.ready ??= mkdir(this.dir, { recursive: true });
    await this.ready;
    const file = this.fileOf(record.id);
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, JSON.stringify(record));
    await rename(temp, file);
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    if (!isResponseId(id)) return undefined;
    let text: string;
    try {
      text = await readFile(this.fileOf(id), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    const record: unknown = JSON.parse(text);
    return isStoredResponse(record) && record.id === id ? record : undefined;
  }

  async delete(id: string): Promise<boolean> {
    if (!isResponseId(id)) return false;
    try {
      await rm(this.fileOf(id));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw error;
    }
  }

  async prune(before: number): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
      throw error;
    }
    let removed = 0;
    for (const name of names) {
      const file = path.join(this.dir, name);
      // A temp file left by a crash is as old as its write; a record by its modification time, which is its creation.
      const { mtimeMs } = await stat(file).catch(() => ({ mtimeMs: Number.POSITIVE_INFINITY }));
      if (mtimeMs / 1000 >= before) continue;
      await rm(file, { force: true });
      removed += 1;
    }
    return removed;
  }

  private fileOf(id: string): string {
    return path.join(this.dir, `${id}.json`);
  }
}

/** A document read back (a file, a Redis value) that has every field of a stored response. */
export function isStoredResponse(value: unknown): value is StoredResponse {
  return (
    isObject(value) &&
    typeof value.id === "string" &&
    typeof value.agentId === "string" &&
    typeof value.createdAt === "number" &&
    isObject(value.response) &&
    Array.isArray(value.input)
  );
}
