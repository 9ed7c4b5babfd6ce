// A consistent copy of a live home in a staging folder, taken while the server keeps serving. The
// order of the steps is what makes it consistent (docs/decisions.md §14):
//
// 1. config.json, then metadata.json under the metadata's cross-process lock (no key being added
//    is half in it).
// 2. The usage high-water mark BEFORE the usage logs: the mark never claims rows the log does not
//    hold yet and the logs only grow, so logs copied after it always reach it. The copies are then
//    opened the way a start opens them (UsageLog.open), which checks exactly that and leaves an
//    exact mark for what was copied: the restored home opens, with the balances of the copy.
// 3. File records, then the blobs of the `ready` ones. A record still `uploading` is an upload in
//    flight: left out, with its bytes. A `pending` one (a presigned upload whose bytes have not
//    come) is kept without bytes, as the server keeps it. A blob gone by the time it is linked was
//    deleted meanwhile (a delete removes the blob, then the record): its record is dropped too, so
//    the archive shows the delete done rather than a record without bytes.
// 4. Video jobs, then the reference photo of the jobs still waiting for one.
// 5. Everything else below data/ and tls/ (projects, the signing key, storage operation logs, the
//    TLS certificate ...), leaving out temp files, lock folders and caches.
import { createWriteStream, type Dirent, promises as fs } from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { createBlobStore } from "../../blobs/create-blob-store.js";
import type { StorageSettings } from "../../config/config-schema.js";
import { parseConfigText } from "../../config/load-config.js";
import type { HomePaths } from "../../config/paths.js";
import { withFileLock } from "../../store/file-lock.js";
import type { FileRecord } from "../../store/file-records.js";
import { usageWatermarkFile } from "../../store/usage-files.js";
import { UsageLog } from "../../store/usage-log.js";
import { TERMINAL_STATUSES, type VideoJobRecord } from "../../store/video-jobs.js";
import type { BackupContents } from "./backup-manifest.js";
import { GW_DIRECTORY_ENTRIES } from "./home-entries.js";
import { copyCompleteLines, copyWhole, isMissing, linkOrCopy } from "./snapshot-copy.js";

export interface Snapshot {
  /** The staging folder: every file below it, laid out as in the home. */
  directory: string;
  /** Archive paths of the staged files, in the order they were taken. */
  files: string[];
  contents: BackupContents;
  /** What was left out or changed on the way, for the operator. */
  notes: string[];
}

/** Set in storage-service.ts and gateway.ts (the others come from paths.ts); the archive keeps the home's layout. */
const RECORDS = "data/storage/records";
const VIDEO_JOBS = "data/video-jobs";
/** The response cache (store/local-response-cache.ts): answers that can be asked again, up to cache.maxBytes of them. */
const RESPONSE_CACHE = "data/cache";
const USAGE_LOG_NAME = /^\d{4}-\d{2}\.jsonl$/;
const RECORD_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export async function snapshotHome(paths: HomePaths, staging: string): Promise<Snapshot> {
  const snapshot = new SnapshotBuilder(paths.home, staging);
  const storage = await snapshot.config(paths.config);
  const { agents, keys } = await snapshot.metadata(paths.metadata);
  const usagePeriods = await snapshot.usage(paths.usageDir);
  const storedFiles = await snapshot.storedFiles(storage, paths.blobsDir);
  await snapshot.videoJobs();
  snapshot.leaveOut(RESPONSE_CACHE);
  for (const entry of GW_DIRECTORY_ENTRIES) await snapshot.remaining(entry);
  return { directory: staging, files: snapshot.files, notes: snapshot.notes, contents: { agents, keys, storedFiles, usagePeriods } };
}

class SnapshotBuilder {
  readonly files: string[] = [];
  readonly notes: string[] = [];
  /** Archive paths taken (or deliberately left out) by a step of their own. */
  private readonly handled = new Set<string>();

  constructor(
    private readonly home: string,
    private readonly staging: string,
  ) {}

  /** The config, and its storage settings (where the blobs are) as the copy says. */
  async config(file: string): Promise<StorageSettings | null> {
    const name = this.nameOf(file);
    if (!(await copyWhole(file, await this.target(name)))) throw new Error(`${file} is missing: ${this.home} is not a gw home`);
    this.add(name);
    try {
      return parseConfigText(await fs.readFile(path.join(this.staging, name), "utf8"), file).storage;
    } catch (error) {
      this.notes.push(`the config does not load (${(error as Error).message}); blobs were looked for in the default place`);
      return null;
    }
  }

  async metadata(file: string): Promise<{ agents: number; keys: number }> {
    const name = this.nameOf(file);
    const copied = await withFileLock(file, async () => copyWhole(file, await this.target(name)));
    if (!copied) throw new Error(`${file} (agents and keys) is missing: nothing to back up`);
    this.add(name);
    try {
      const data = JSON.parse(await fs.readFile(path.join(this.staging, name), "utf8")) as { agents?: unknown[]; keys?: unknown[] };
      return { agents: data.agents?.length ?? 0, keys: data.keys?.length ?? 0 };
    } catch {
      this.notes.push(`${file} is not valid JSON: copied as it is (the restored home will refuse to start, as this one would)`);
      return { agents: 0, keys: 0 };
    }
  }

  /** The mark first, then the logs; then opened as a start would, which leaves an exact mark. */
  async usage(usageDir: string): Promise<string[]> {
    const markFile = usageWatermarkFile(usageDir);
    const markName = this.nameOf(markFile);
    this.handled.add(markName);
    await copyWhole(markFile, await this.target(markName));
    const periods: string[] = [];
    for (const name of (await listDirectory(usageDir)).sort()) {
      if (!USAGE_LOG_NAME.test(name)) continue;
      const archived = `${this.nameOf(usageDir)}/${name}`;
      if (await copyCompleteLines(path.join(usageDir, name), await this.target(archived))) {
        this.add(archived);
        periods.push(name.slice(0, 7));
      }
    }
    const stagedUsage = path.join(this.staging, this.nameOf(usageDir));
    await fs.mkdir(stagedUsage, { recursive: true });
    try {
      UsageLog.open(stagedUsage, new Date(), path.join(this.staging, markName)).close();
    } catch (error) {
      throw new Error(`the usage logs cannot be backed up as they are: ${(error as Error).message}`);
    }
    if (await exists(path.join(this.staging, markName))) this.add(markName);
    // Anything else in the folder is derived from the logs (a cache): rebuilt by the restored home.
    this.handled.add(this.nameOf(usageDir));
    return periods;
  }

  /** Records first, then the bytes of the committed ones. Returns how many records were kept. */
  async storedFiles(storage: StorageSettings | null, defaultBlobs: string): Promise<number> {
    const ready: FileRecord[] = [];
    let kept = 0;
    let inFlight = 0;
    const recordsDir = path.join(this.home, RECORDS);
    for (const agentId of await listDirectory(recordsDir)) {
      if (!RECORD_NAME.test(agentId)) continue;
      for (const name of await listDirectory(path.join(recordsDir, agentId))) {
        if (!name.endsWith(".json") || !RECORD_NAME.test(name.slice(0, -".json".length))) continue;
        const archived = `${RECORDS}/${agentId}/${name}`;
        const text = await readIfThere(path.join(recordsDir, agentId, name));
        if (text === null) continue; // deleted since the listing
        const record = parseJson<FileRecord>(text);
        if (record?.state === "uploading") {
          inFlight += 1;
          continue;
        }
        await fs.writeFile(await this.target(archived), text, { mode: 0o600 });
        this.add(archived);
        kept += 1;
        if (record === null) this.notes.push(`${archived} is not valid JSON: copied as it is (the restored home will refuse to start, as this one would)`);
        if (record?.state === "ready") ready.push(record);
      }
    }
    if (inFlight > 0) this.notes.push(`${inFlight} ${inFlight === 1 ? "upload" : "uploads"} in flight left out`);
    const blobs = await BlobSource.open(storage, defaultBlobs);
    try {
      for (const record of ready) {
        const archived = `${this.nameOf(defaultBlobs)}/${record.agentId}/${record.id}`;
        if (await blobs.stage(record, await this.target(archived))) {
          this.add(archived);
          continue;
        }
        // Deleted meanwhile: drop the record as well (see the top of this file).
        const recordName = `${RECORDS}/${record.agentId}/${record.id}.json`;
        await fs.rm(path.join(this.staging, recordName), { force: true });
        this.files.splice(this.files.indexOf(recordName), 1);
        kept -= 1;
        this.notes.push(`file ${record.id} was deleted during the backup: left out`);
      }
    } finally {
      await blobs.close();
    }
    this.handled.add(RECORDS);
    this.handled.add(this.nameOf(defaultBlobs));
    return kept;
  }

  /** Jobs first, then the reference photos they still need (written before the job, removed after it ends). */
  async videoJobs(): Promise<void> {
    this.handled.add(VIDEO_JOBS);
    const directory = path.join(this.home, VIDEO_JOBS);
    for (const name of await listDirectory(directory)) {
      if (!name.endsWith(".json") || name.startsWith(".")) continue;
      const file = path.join(directory, name);
      let text = await readIfThere(file);
      if (text === null) continue;
      const id = name.slice(0, -".json".length);
      const input = `${VIDEO_JOBS}/${id}.input`;
      if (needsInput(parseJson<VideoJobRecord>(text))) {
        if (await linkOrCopy(path.join(directory, `${id}.input`), await this.target(input))) this.add(input);
        // The photo goes when the job ends: take the job as it is now, ended.
        else text = (await readIfThere(file)) ?? text;
      }
      const archived = `${VIDEO_JOBS}/${name}`;
      await fs.writeFile(await this.target(archived), text, { mode: 0o600 });
      this.add(archived);
    }
  }

  /** A folder that is no state to restore (a cache). */
  leaveOut(relative: string): void {
    this.handled.add(relative);
  }

  /** Every other file below a gw folder, as it is; temp files, locks and caches left out. */
  async remaining(relative: string): Promise<void> {
    if (this.handled.has(relative)) return;
    const source = path.join(this.home, relative);
    let entries: Dirent[];
    try {
      entries = await fs.readdir(source, { withFileTypes: true });
    } catch (error) {
      if (isMissing(error) || (error as NodeJS.ErrnoException).code === "ENOTDIR") return;
      throw error;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const archived = `${relative}/${entry.name}`;
      if (this.handled.has(archived) || isTransient(entry.name)) continue;
      if (entry.isDirectory()) await this.remaining(archived);
      else if (!entry.isFile()) this.notes.push(`${archived} is not a regular file: left out`);
      else if (await (entry.name.endsWith(".jsonl") ? copyCompleteLines : copyWhole)(path.join(source, entry.name), await this.target(archived)))
        this.add(archived);
    }
  }

  private add(name: string): void {
    this.files.push(name);
    this.handled.add(name);
  }

  private nameOf(file: string): string {
    return path.relative(this.home, file).split(path.sep).join("/");
  }

  /** Where an archive path is staged; its folder is created. */
  private async target(name: string): Promise<string> {
    const file = path.join(this.staging, ...name.split("/"));
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    return file;
  }
}

/** Where the committed files' bytes are read from: the blob folder directly, or any other driver. */
class BlobSource {
  private constructor(
    private readonly base: string | null,
    private readonly store: Awaited<ReturnType<typeof createBlobStore>> | null,
  ) {}

  static async open(storage: StorageSettings | null, defaultBase: string): Promise<BlobSource> {
    if (!storage || storage.driver === "fs") {
      const base = typeof storage?.options.base === "string" ? path.resolve(storage.options.base) : defaultBase;
      return new BlobSource(base, null);
    }
    return new BlobSource(null, await createBlobStore(storage, defaultBase));
  }

  /** Stage the record's bytes; false when there are none (deleted). */
  async stage(record: FileRecord, target: string): Promise<boolean> {
    if (this.base !== null) return linkOrCopy(path.join(this.base, record.agentId, record.id), target);
    const blob = await this.store!.read(`${record.agentId}:${record.id}`);
    if (!blob) return false;
    await pipeline(blob.body, createWriteStream(target, { mode: 0o600 }));
    return true;
  }

  async close(): Promise<void> {
    await this.store?.close();
  }
}

function needsInput(job: VideoJobRecord | null): boolean {
  return job !== null && !TERMINAL_STATUSES.has(job.status) && job.request?.image !== undefined;
}

/** Temp files of atomic writes (`.x.tmp`, `x.123.tmp`), lock folders, the blob driver's `.partial`. */
function isTransient(name: string): boolean {
  return name.startsWith(".") || name.endsWith(".tmp") || name.endsWith(".lock");
}

function parseJson<T>(text: string): T | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? (value as T) : null;
  } catch {
    return null;
  }
}

async function listDirectory(directory: string): Promise<string[]> {
  try {
    return await fs.readdir(directory);
  } catch (error) {
    if (isMissing(error) || (error as NodeJS.ErrnoException).code === "ENOTDIR") return [];
    throw error;
  }
}

async function readIfThere(file: string): Promise<string | null> {
  try {
    return await fs.readFile(file, "utf8");
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}
