// Small mutable records (agents, keys) in one lowdb JSON file. Every mutation, from the server
// or a CLI process, runs under a cross-process lock on a fresh read, and is written atomically.
// Mutations issued together in one process are coalesced into one locked read-modify-write.
import { type FSWatcher, statSync, watch } from "node:fs";
import path from "node:path";
import { Low } from "lowdb";
import { JSONFile } from "lowdb/node";
import { withFileLock } from "./file-lock.js";
import { emptyMetadata, type MetadataData } from "./records.js";
import { StoreError } from "./store-error.js";

type Mutation = { apply: (data: MetadataData) => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void };

/**
 * The agents-and-keys store as the server and the `gw` commands use it, whichever backend holds
 * it: this file for one gw, Redis (redis-metadata-store.ts) for several instances sharing state.
 */
export interface MetadataRecords {
  /** The document as last read or written; replaced (not edited in place) when it changes. */
  readonly data: MetadataData;
  /** Apply a change to a fresh read of the document and persist it; resolves with `apply`'s result. */
  mutate<T>(apply: (data: MetadataData) => T): Promise<T>;
  /** Re-read when someone else changed the document. Returns true when data changed. */
  reloadIfChanged(): Promise<boolean>;
  /** Follow changes made elsewhere (the CLI, other instances) without being asked. */
  watch(): void;
  /** Called after every reload and every own mutation. */
  onChange(listener: () => void): void;
  close(): void;
}

export class MetadataStore implements MetadataRecords {
  private readonly db: Low<MetadataData>;
  private pending: Mutation[] = [];
  private flushing: Promise<void> | null = null;
  private lastSeen = "";
  private watcher: FSWatcher | null = null;
  private readonly listeners = new Set<() => void>();

  private constructor(readonly file: string) {
    this.db = new Low(new JSONFile<MetadataData>(file), emptyMetadata());
  }

  /** Open an existing store. A missing or corrupt file is an error unless `create` is set (gw init). */
  static async open(file: string, options: { create?: boolean } = {}): Promise<MetadataStore> {
    const store = new MetadataStore(file);
    if (fileSignature(file) !== "") await store.read();
    else if (options.create) await store.createIfMissing();
    else {
      throw new StoreError(`metadata file ${file} is missing; refusing to start with empty balances and keys (restore it, or run \`gw init\` on a new home)`, {
        commandMessage: `the metadata file ${file} (agents and keys) is missing: restore it from a backup, or run \`gw init\` to start this home afresh with no agents or keys`,
      });
    }
    return store;
  }

  get data(): MetadataData {
    return this.db.data;
  }

  /** Apply a change under the cross-process lock and persist it; resolves with `apply`'s result. */
  mutate<T>(apply: (data: MetadataData) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ apply, resolve: resolve as (value: unknown) => void, reject });
      this.flushing ??= Promise.resolve().then(() => this.flush());
    });
  }

  /** Re-read the file when another process changed it. Returns true when data changed. */
  async reloadIfChanged(): Promise<boolean> {
    if (fileSignature(this.file) === this.lastSeen) return false;
    await this.read();
    return true;
  }

  /** Follow changes made by other processes (the CLI) while the server runs. */
  watch(): void {
    if (this.watcher) return;
    let timer: NodeJS.Timeout | null = null;
    this.watcher = watch(path.dirname(this.file), { persistent: false }, () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        this.reloadIfChanged().catch(() => undefined);
      }, 20);
    });
  }

  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  close(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  /** Under the lock, so that parallel first commands on a fresh home agree on one file. */
  private async createIfMissing(): Promise<void> {
    await withFileLock(this.file, async () => {
      if (fileSignature(this.file) === "") {
        this.db.data = emptyMetadata();
        await this.db.write();
      }
      await this.read();
    });
  }

  private async read(): Promise<void> {
    const signature = fileSignature(this.file);
    try {
      await this.db.read();
    } catch (error) {
      throw new StoreError(`metadata file ${this.file} is corrupt (${(error as Error).message}); refusing to start — restore it from a backup`, {
        commandMessage: corruptForCommand(this.file, `is not valid JSON (${(error as Error).message})`),
      });
    }
    const data = this.db.data as Partial<MetadataData> | null;
    if (!data || !Array.isArray(data.agents) || !Array.isArray(data.keys)) {
      throw new StoreError(`metadata file ${this.file} is not a gw metadata file; refusing to start — restore it from a backup`, {
        commandMessage: corruptForCommand(this.file, "is not a gw metadata file (no agents and keys lists)"),
      });
    }
    this.lastSeen = signature;
    for (const listener of this.listeners) listener();
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      await withFileLock(this.file, async () => {
        // A missing file starts empty; an existing one is always re-read (corrupt -> StoreError).
        if (fileSignature(this.file) !== "") await this.read();
        else this.db.data = emptyMetadata();
        const results = batch.map((mutation) => {
          try {
            return { mutation, ok: true as const, value: mutation.apply(this.db.data) };
          } catch (error) {
            return { mutation, ok: false as const, error };
          }
        });
        await this.db.write();
        this.lastSeen = fileSignature(this.file);
        for (const result of results) {
          if (result.ok) result.mutation.resolve(result.value);
          else result.mutation.reject(result.error);
        }
      });
      for (const listener of this.listeners) listener();
    } catch (error) {
      for (const mutation of batch) mutation.reject(error);
    } finally {
      this.flushing = this.pending.length > 0 ? Promise.resolve().then(() => this.flush()) : null;
    }
  }
}

/** A damaged store as a command reports it: gw never rewrites it, so recovery is the user's copy. */
function corruptForCommand(file: string, problem: string): string {
  return `the metadata file ${file} ${problem}, so gw cannot read its agents and keys; nothing was changed. Restore it from a backup (gw keeps none itself), or, to start over with no agents or keys, move it aside and run \`gw init\`.`;
}

function fileSignature(file: string): string {
  try {
    const stat = statSync(file);
    return `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
  } catch {
    return "";
  }
}
