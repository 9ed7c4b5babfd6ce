// The response cache on this home's disk (docs/decisions.md §22): one file per entry,
// `<directory>/<agent id>/<hash>`, an 8-byte header (the instant the entry expires: ms since the
// epoch, unsigned big-endian) then the value. Written to a temp file and renamed, so a reader sees
// the old value or the new, never a mix; without fsync: it is a cache, and a crash loses at most
// the entries being written. The index (every entry's size and expiry, least recently used first)
// is in memory, built once by open() from a scan of the folder, ordered by the files' modification
// times (a hit touches its file, so the order outlives a restart). The bytes counted, and bounded,
// are the values' (not the headers' or the file system's blocks).
//
// Both `gw serve` and the `gw cache` commands open it, so a `gw cache clear` while the server
// runs removes files behind the server's index. That index then over-counts: the bound stays
// conservative (it evicts early, never late), and the count heals as the removed entries are
// read (a missing file is a miss and leaves the index) or evicted (removing a file already gone
// is nothing). A clear removes entry files only, never a temp file or a folder, so a write in
// progress in the server is never cut short by it; nor is open()'s sweep, which leaves temp files
// younger than ten minutes. (A lapsed file the sweep removes just as the server writes the same
// entry again takes the new one with it: that entry is a miss, once.)
import { randomBytes } from "node:crypto";
import { type Dirent, promises as fs } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import pLimit from "p-limit";
import { CACHE_AGENT_ID, CACHE_HASH, type CacheTotals, checkCachePut, isCacheEntry, type ResponseCacheStore } from "./response-cache.js";

const HEADER_BYTES = 8;
/** A temp file untouched for this long is a write a crash cut short; a younger one may be a live process's write. */
const ABANDONED_TEMP_MS = 10 * 60_000;
/** Files read at once while open() scans: enough to keep the disk busy, few enough for the descriptor limit. */
const SCAN_CONCURRENCY = 16;

interface Entry {
  agentId: string;
  hash: string;
  /** The value's bytes. */
  bytes: number;
  /** ms since the epoch. */
  expiresAt: number;
}

export class LocalResponseCache implements ResponseCacheStore {
  /** Every entry by `<agent>/<hash>`, least recently used first: a Map keeps insertion order, and a use moves its entry to the end. */
  private readonly entries = new Map<string, Entry>();
  private totalBytes = 0;
  /** The last write or removal queued for each entry's file: those of one entry run one after another. */
  private readonly fileWork = new Map<string, Promise<void>>();

  private constructor(private readonly directory: string) {}

  /**
   * Scan the folder (missing: an empty cache) into the index. Entries whose lifetime ended, files
   * too short to hold a header and temp files abandoned by a crash are deleted on the way.
   */
  static async open(directory: string): Promise<LocalResponseCache> {
    const cache = new LocalResponseCache(directory);
    const now = Date.now();
    const limit = pLimit(SCAN_CONCURRENCY);
    const scans: Array<Promise<(Entry & { usedAt: number }) | undefined>> = [];
    for (const folder of await listFolder(directory)) {
      if (!(folder.isDirectory() && CACHE_AGENT_ID.test(folder.name))) continue;
      const agentId = folder.name;
      for (const file of await listFolder(path.join(directory, agentId))) {
        if (!file.isFile()) continue;
        const filePath = path.join(directory, agentId, file.name);
        if (CACHE_HASH.test(file.name)) scans.push(limit(() => readIndexEntry(filePath, agentId, file.name, now)));
        else if (file.name.endsWith(".tmp")) scans.push(limit(() => removeAbandonedTemp(filePath, now).then(() => undefined)));
      }
    }
    const found = (await Promise.all(scans)).filter((entry) => entry !== undefined);
    found.sort((a, b) => a.usedAt - b.usedAt);
    for (const { agentId, hash, bytes, expiresAt } of found) {
      cache.entries.set(keyOf(agentId, hash), { agentId, hash, bytes, expiresAt });
      cache.totalBytes += bytes;
    }
    return cache;
  }

  async get(agentId: string, hash: string): Promise<Buffer | undefined> {
    if (!isCacheEntry(agentId, hash)) return undefined;
    const key = keyOf(agentId, hash);
    // Only this process writes entries (one `gw serve` per home): what the index lacks is not on disk.
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      await this.removeFiles(this.dropFromIndex(key, entry));
      return undefined;
    }
    const file = this.fileOf(agentId, hash);
    let content: Buffer;
    try {
      content = await fs.readFile(file);
    } catch (error) {
      if (!isMissing(error)) throw error;
      // Removed behind the index's back (`gw cache clear` in another process).
      this.dropFromIndex(key, entry);
      return undefined;
    }
    if (content.length < HEADER_BYTES) {
      await this.removeFiles(this.dropFromIndex(key, entry));
      return undefined;
    }
    if (this.entries.get(key) === entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    // The file's time is its last use: the order open() rebuilds after a restart.
    const now = new Date();
    await fs.utimes(file, now, now).catch(() => undefined);
    return content.subarray(HEADER_BYTES);
  }

  async put(agentId: string, hash: string, value: Buffer, ttlMs: number, maxBytes: number): Promise<void> {
    checkCachePut(agentId, hash, ttlMs, maxBytes);
    if (value.length > maxBytes) return;
    const key = keyOf(agentId, hash);
    // Puts of one entry run in turn, so the index ends with the last one's size and expiry, as the file ends with its bytes.
    const evicted = await this.serialized(key, async () => {
      const expiresAt = Date.now() + ttlMs;
      const header = Buffer.alloc(HEADER_BYTES);
      header.writeBigUInt64BE(BigInt(expiresAt));
      await writeReplacing(this.fileOf(agentId, hash), Buffer.concat([header, value]));
      const previous = this.entries.get(key);
      if (previous) this.dropFromIndex(key, previous);
      this.entries.set(key, { agentId, hash, bytes: value.length, expiresAt });
      this.totalBytes += value.length;
      return this.evictTo(maxBytes);
    });
    // Outside the entry's turn: a removal waits for the turn of the entry it removes.
    await this.removeFiles(evicted);
  }

  async totals(agentId?: string): Promise<CacheTotals> {
    const totals = { entries: 0, bytes: 0 };
    if (agentId !== undefined && !CACHE_AGENT_ID.test(agentId)) return totals;
    const now = Date.now();
    const lapsed: Entry[] = [];
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now) lapsed.push(...this.dropFromIndex(key, entry));
      else if (agentId === undefined || entry.agentId === agentId) {
        totals.entries += 1;
        totals.bytes += entry.bytes;
      }
    }
    await this.removeFiles(lapsed);
    return totals;
  }

  async clear(agentId?: string): Promise<CacheTotals> {
    if (agentId !== undefined && !CACHE_AGENT_ID.test(agentId)) throw new Error(`not a response cache agent: ${JSON.stringify(agentId)}`);
    const removed = { entries: 0, bytes: 0 };
    const now = Date.now();
    for (const [key, entry] of this.entries) {
      if (agentId !== undefined && entry.agentId !== agentId) continue;
      this.dropFromIndex(key, entry);
      if (entry.expiresAt <= now) continue;
      removed.entries += 1;
      removed.bytes += entry.bytes;
    }
    // Every entry file on disk, indexed or not; each through its entry's turn, after any write of it in progress.
    const agents = agentId === undefined ? (await listFolder(this.directory)).filter((folder) => folder.isDirectory()).map((folder) => folder.name) : [agentId];
    for (const agent of agents.filter((name) => CACHE_AGENT_ID.test(name))) {
      const hashes = (await listFolder(path.join(this.directory, agent))).map((file) => file.name).filter((name) => CACHE_HASH.test(name));
      await Promise.all(hashes.map((hash) => this.removeFile(agent, hash)));
    }
    return removed;
  }

  async close(): Promise<void> {
    await Promise.all(this.fileWork.values());
  }

  /** Remove the entry from the index if it is still the one there; the entries whose files are to go. */
  private dropFromIndex(key: string, entry: Entry): Entry[] {
    if (this.entries.get(key) !== entry) return [];
    this.entries.delete(key);
    this.totalBytes -= entry.bytes;
    return [entry];
  }

  /** Drop the least recently used entries from the index until the total is within `maxBytes`; the dropped. */
  private evictTo(maxBytes: number): Entry[] {
    const evicted: Entry[] = [];
    for (const [key, entry] of this.entries) {
      if (this.totalBytes <= maxBytes) break;
      evicted.push(...this.dropFromIndex(key, entry));
    }
    return evicted;
  }

  private async removeFiles(entries: Entry[]): Promise<void> {
    await Promise.all(entries.map((entry) => this.removeFile(entry.agentId, entry.hash)));
  }

  /** Delete an entry's file in its turn, unless a put that came first indexed it again meanwhile. */
  private removeFile(agentId: string, hash: string): Promise<void> {
    const key = keyOf(agentId, hash);
    return this.serialized(key, async () => {
      if (!this.entries.has(key)) await fs.rm(this.fileOf(agentId, hash), { force: true });
    });
  }

  private serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
    const result = (this.fileWork.get(key) ?? Promise.resolve()).then(work);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.fileWork.set(key, settled);
    void settled.then(() => {
      if (this.fileWork.get(key) === settled) this.fileWork.delete(key);
    });
    return result;
  }

  private fileOf(agentId: string, hash: string): string {
    return path.join(this.directory, agentId, hash);
  }
}

function keyOf(agentId: string, hash: string): string {
  return `${agentId}/${hash}`;
}

/** A file found by open(): its entry, or undefined when it was deleted (lapsed, unreadable) or vanished meanwhile. */
async function readIndexEntry(file: string, agentId: string, hash: string, now: number): Promise<(Entry & { usedAt: number }) | undefined> {
  let handle: FileHandle;
  try {
    handle = await fs.open(file, "r");
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  let size: number;
  let usedAt: number;
  let header: Buffer;
  try {
    ({ size, mtimeMs: usedAt } = await handle.stat());
    header = Buffer.alloc(HEADER_BYTES);
    await handle.read(header, 0, HEADER_BYTES, 0);
  } finally {
    await handle.close();
  }
  const expiresAt = size >= HEADER_BYTES ? Number(header.readBigUInt64BE()) : 0;
  if (expiresAt <= now) {
    await fs.rm(file, { force: true });
    return undefined;
  }
  return { agentId, hash, bytes: size - HEADER_BYTES, expiresAt, usedAt };
}

async function removeAbandonedTemp(file: string, now: number): Promise<void> {
  try {
    const { mtimeMs } = await fs.stat(file);
    if (now - mtimeMs > ABANDONED_TEMP_MS) await fs.rm(file, { force: true });
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
}

/**
 * Write the whole content, then rename it over the entry's file; the temp name is this write's
 * alone (`<hash>.<pid>.<random>.tmp`). A folder removed meanwhile (by hand) is made again, once.
 */
async function writeReplacing(file: string, content: Buffer): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await fs.writeFile(temporary, content, { flag: "wx", mode: 0o600 });
      await fs.rename(temporary, file);
      return;
    } catch (error) {
      await fs.rm(temporary, { force: true });
      if (!(isMissing(error) && attempt === 1)) throw error;
    }
  }
}

async function listFolder(directory: string): Promise<Dirent[]> {
  try {
    return await fs.readdir(directory, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === "ENOENT";
}
