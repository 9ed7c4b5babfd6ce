// Batches in this home's files (the embedded BatchRecords, src/store/batch-records.ts):
//   <dir>/<id>.json           the record, written atomically (temp file, fsync, rename) on every change
//   <dir>/<id>.results.jsonl  one JSON line per recorded result ({index, ok, line}), in the order recorded
// They are what a restart resumes from: a recorded result stands for a line answered and billed, so
// addResult resolves only once its line is appended and fsynced and the record counts it. Results
// added in the same turn (the runner's lines in flight) go out in one write, one fsync and one
// record write. The server is the only writer of its directory (one `gw serve` per home): records
// are read once at start and answered from memory, with the lines already recorded of every batch
// still running; a results line a crash cut short is cut off then, so that line runs again.
// Claims are held in memory with an expiry, as VideoJobStore's.
import { promises as fs, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { writeFileAtomic } from "./atomic-write.js";
import {
  applyBatchChange,
  BATCH_STATUSES,
  BatchClaimLostError,
  BatchEndedError,
  type BatchLineResult,
  type BatchRecord,
  type BatchRecords,
  type BatchStatus,
  ENDED_BATCH_STATUSES,
  isBatchId,
  type JobClaim,
} from "./batch-records.js";
import { LocalClaims } from "./job-claims.js";
import { StoreError } from "./store-error.js";

/** The results file of a batch still running, as this process knows it. */
interface ResultsLog {
  /** The lines recorded, or being written. */
  indexes: Set<number>;
  /** Bytes of whole, synced lines: what results() reads (a write under way is not yet recorded). */
  bytes: number;
  /** Results waiting for the next write. */
  pending: Array<{ result: BatchLineResult; resolve(): void; reject(error: unknown): void }>;
  /** The write under way, while one is. */
  writing?: Promise<void>;
}

export class LocalBatchStore implements BatchRecords {
  private readonly records = new Map<string, BatchRecord>();
  private readonly logs = new Map<string, ResultsLog>();
  /** The claims on batches (one process: a Map with expiry is enough). */
  private readonly claims = new LocalClaims();

  private constructor(readonly directory: string) {}

  /** Read every record, and the results of each batch still running; a file that cannot be read refuses the start, naming it. */
  static async open(directory: string): Promise<LocalBatchStore> {
    mkdirSync(directory, { recursive: true });
    const store = new LocalBatchStore(directory);
    for (const name of readdirSync(directory)) {
      if (!name.endsWith(".json") || name.startsWith(".")) continue;
      const record = readRecord(path.join(directory, name));
      store.records.set(record.id, record);
    }
    for (const record of store.records.values()) await store.openResults(record);
    return store;
  }

  async create(batch: BatchRecord): Promise<void> {
    if (!isBatchId(batch.id)) throw new RangeError(`${batch.id} is not a batch id`);
    if (this.records.has(batch.id)) throw new StoreError(`batch ${batch.id} is already in the store`);
    this.persist(batch);
  }

  async get(id: string): Promise<BatchRecord | undefined> {
    return this.records.get(id);
  }

  /** Every batch, oldest first (`gw migrate` copies them all). */
  all(): BatchRecord[] {
    return [...this.records.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  async list(agentId: string, options: { after?: string; limit: number }): Promise<{ batches: BatchRecord[]; hasMore: boolean }> {
    checkLimit(options.limit);
    const { after } = options;
    // Ids are ASCII: `<` is the byte order Redis lists them in, and ULIDs sort by time.
    const older = [...this.records.values()]
      .filter((batch) => batch.agentId === agentId && (after === undefined || batch.id < after))
      .sort((a, b) => (a.id < b.id ? 1 : -1));
    return { batches: older.slice(0, options.limit), hasMore: older.length > options.limit };
  }

  async active(): Promise<BatchRecord[]> {
    return [...this.records.values()].filter((batch) => !ENDED_BATCH_STATUSES.has(batch.status)).sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async update(id: string, change: Partial<BatchRecord>, claim?: JobClaim, check?: (current: BatchRecord) => void): Promise<BatchRecord> {
    const current = this.records.get(id);
    if (!current) throw new StoreError(`batch ${id} is not in the store`);
    if (claim) {
      if (!this.claims.holds(claim, id)) throw new BatchClaimLostError(id);
      if (ENDED_BATCH_STATUSES.has(current.status)) throw new BatchEndedError(id, current.status);
    }
    check?.(current);
    const next = applyBatchChange(current, change);
    this.persist(next);
    return next;
  }

  async addResult(id: string, result: BatchLineResult, claim: JobClaim): Promise<boolean> {
    if (!(Number.isSafeInteger(result.index) && result.index >= 0)) throw new RangeError(`a line's index is a whole number from 0, not ${result.index}`);
    const current = this.records.get(id);
    if (!current) throw new StoreError(`batch ${id} is not in the store`);
    if (!this.claims.holds(claim, id)) throw new BatchClaimLostError(id);
    if (ENDED_BATCH_STATUSES.has(current.status)) throw new BatchEndedError(id, current.status);
    const log = this.logOf(id);
    if (log.indexes.has(result.index)) return false;
    // Taken now, so a second result for the line made before this one is written is refused too.
    log.indexes.add(result.index);
    this.records.set(id, counted(current, result, 1));
    await new Promise<void>((resolve, reject) => {
      log.pending.push({ result, resolve, reject });
      log.writing ??= this.writeResults(id, log);
    });
    return true;
  }

  async *results(id: string): AsyncIterable<BatchLineResult> {
    if (!isBatchId(id)) return;
    // A batch that ended before this start has no log: nothing appends to its file any more.
    const bytes = this.logs.get(id)?.bytes;
    if (bytes === 0) return;
    const file = this.resultsFile(id);
    yield* readResults(file, bytes);
  }

  async dropResults(id: string): Promise<void> {
    if (!isBatchId(id)) return;
    const log = this.logs.get(id);
    while (log?.writing) await log.writing;
    this.logs.delete(id);
    rmSync(this.resultsFile(id), { force: true });
  }

  async claim(id: string, ttlMs: number): Promise<JobClaim | null> {
    return this.claims.take(id, ttlMs);
  }

  async countByStatus(): Promise<Map<BatchStatus, number>> {
    const counts = new Map<BatchStatus, number>();
    for (const batch of this.records.values()) counts.set(batch.status, (counts.get(batch.status) ?? 0) + 1);
    return counts;
  }

  /** Cut off a line a crash left unfinished; for a batch still running, learn its recorded lines, and count them as its record does. */
  private async openResults(record: BatchRecord): Promise<void> {
    const file = this.resultsFile(record.id);
    const bytes = await cutTornLine(file);
    if (bytes === undefined || ENDED_BATCH_STATUSES.has(record.status)) return;
    const log: ResultsLog = { indexes: new Set(), bytes, pending: [] };
    let completed = 0;
    let failed = 0;
    if (bytes > 0)
      for await (const result of readResults(file, bytes)) {
        if (log.indexes.has(result.index)) continue;
        log.indexes.add(result.index);
        if (result.ok) completed++;
        else failed++;
      }
    this.logs.set(record.id, log);
    // The file is the truth: a crash may have come between a result's line and its record's write.
    const counts = record.requestCounts;
    if (counts.completed !== completed || counts.failed !== failed) this.persist({ ...record, requestCounts: { ...counts, completed, failed } });
  }

  /** Append what is pending, a turn's results at a time, until nothing is; then write the record that counts them. */
  private async writeResults(id: string, log: ResultsLog): Promise<void> {
    try {
      // Results added in this turn go out with the first one.
      await new Promise((resolve) => setImmediate(resolve));
      while (log.pending.length > 0) {
        const written = log.pending.splice(0);
        const results = written.map((each) => each.result);
        try {
          await this.append(id, log, results);
        } catch (error) {
          // Not recorded: the lines may be run again.
          for (const result of results) log.indexes.delete(result.index);
          const current = this.records.get(id);
          if (current)
            this.records.set(
              id,
              results.reduce((record, result) => counted(record, result, -1), current),
            );
          for (const each of written) each.reject(error);
          continue;
        }
        try {
          const current = this.records.get(id);
          if (current) this.persist(current);
          for (const each of written) each.resolve();
        } catch (error) {
          // The lines are written (the next start counts them from the file); the record is not.
          for (const each of written) each.reject(error);
        }
      }
    } finally {
      // In the same step as the last look at `pending`: a result added after it starts a new write.
      log.writing = undefined;
    }
  }

  /** Append the lines and fsync them; on a failure, leave no part of them in the file. */
  private async append(id: string, log: ResultsLog, results: BatchLineResult[]): Promise<void> {
    const text = results.map(({ index, ok, line }) => `${JSON.stringify({ index, ok, line })}\n`).join("");
    const handle = await fs.open(this.resultsFile(id), "a", 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } catch (error) {
      await handle.truncate(log.bytes).catch(() => undefined);
      throw error;
    } finally {
      await handle.close();
    }
    // A new file's name must survive a crash too.
    if (log.bytes === 0) await syncDirectory(this.directory);
    log.bytes += Buffer.byteLength(text);
  }

  /** The log of a running batch (a new one for a batch whose results are not written yet, or were dropped). */
  private logOf(id: string): ResultsLog {
    let log = this.logs.get(id);
    if (!log) {
      log = { indexes: new Set(), bytes: 0, pending: [] };
      this.logs.set(id, log);
    }
    return log;
  }

  private persist(batch: BatchRecord): void {
    writeFileAtomic(path.join(this.directory, `${batch.id}.json`), `${JSON.stringify(batch, null, 2)}\n`);
    this.records.set(batch.id, batch);
  }

  private resultsFile(id: string): string {
    return path.join(this.directory, `${id}.results.jsonl`);
  }
}

/** A page holds at least nothing; the gateway asks for 1 to 100. */
function checkLimit(limit: number): void {
  if (!(Number.isSafeInteger(limit) && limit >= 0)) throw new RangeError(`a list's limit must be a whole number from 0, not ${limit}`);
}

/** The record with one result counted (`by` 1), or uncounted (-1). */
function counted(batch: BatchRecord, result: BatchLineResult, by: 1 | -1): BatchRecord {
  const counts = batch.requestCounts;
  const requestCounts = result.ok ? { ...counts, completed: counts.completed + by } : { ...counts, failed: counts.failed + by };
  return { ...batch, requestCounts };
}

function readRecord(file: string): BatchRecord {
  let record: BatchRecord;
  try {
    record = JSON.parse(readFileSync(file, "utf8")) as BatchRecord;
  } catch (error) {
    throw new StoreError(`${file}: not a readable batch (${(error as Error).message}); move it aside to start`);
  }
  const counts: Partial<BatchRecord["requestCounts"]> | undefined = record?.requestCounts;
  if (
    typeof record !== "object" ||
    record === null ||
    !isBatchId(record.id) ||
    `${record.id}.json` !== path.basename(file) ||
    !BATCH_STATUSES.includes(record.status) ||
    !(Number.isSafeInteger(counts?.completed) && Number.isSafeInteger(counts?.failed))
  )
    throw new StoreError(`${file}: not a batch record; move it aside to start`);
  return record;
}

/** Cut the file back to its last whole line (a crash can cut an append short); its length then, or undefined when there is none. */
async function cutTornLine(file: string): Promise<number | undefined> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, "r+");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    const chunk = Buffer.alloc(64 * 1024);
    let whole = 0;
    for (let end = size; end > 0; ) {
      const start = Math.max(0, end - chunk.length);
      const { bytesRead } = await handle.read(chunk, 0, end - start, start);
      const newline = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (newline >= 0) {
        whole = start + newline + 1;
        break;
      }
      end = start;
    }
    if (whole < size) {
      await handle.truncate(whole);
      await handle.sync();
    }
    return whole;
  } finally {
    await handle.close();
  }
}

/** The results in the file, line by line; only its first `bytes` when given (the lines known whole). */
async function* readResults(file: string, bytes?: number): AsyncGenerator<BatchLineResult> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  // The stream closes the handle when it ends or is destroyed (a reader that stops early).
  const input = handle.createReadStream(bytes === undefined ? {} : { start: 0, end: bytes - 1 });
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    let number = 0;
    for await (const line of lines) {
      number++;
      yield parseResult(line, `${file}:${number}`);
    }
  } finally {
    lines.close();
    input.destroy();
  }
}

function parseResult(text: string, where: string): BatchLineResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StoreError(`${where}: not a batch result (${(error as Error).message}); move the file aside`);
  }
  const result = value as Partial<BatchLineResult> | null;
  if (!(result && Number.isSafeInteger(result.index) && typeof result.ok === "boolean" && typeof result.line === "string"))
    throw new StoreError(`${where}: not a batch result; move the file aside`);
  return { index: result.index as number, ok: result.ok, line: result.line };
}

async function syncDirectory(directory: string): Promise<void> {
  try {
    const handle = await fs.open(directory, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Not every platform can fsync a directory (Windows); the file's own sync is what matters most.
  }
}
