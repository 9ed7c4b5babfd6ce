// The usage log's high-water mark: per period, how many rows, credits and bytes were written and
// acknowledged. An empty or missing usage log looks exactly like "nothing spent", so without the
// mark deleting data/usage/<period>.jsonl would hand every agent its full allowance again. The
// mark is a lower bound: it may lag the log by about a second, never lead it.
//
// File (data/usage-watermark.json, beside the usage folder):
//   {"version": 1, "periods": {"2026-03": {"rows": 1200, "credits": 4500000, "bytes": 312000}}}
// The current period's log is read at start anyway (its totals are the balances), so its rows and
// credits are compared; an earlier period's log is only measured (its size must reach `bytes`), so
// a start does not read more as history grows.
import { closeSync, fsyncSync, openSync, readFileSync, renameSync } from "node:fs";
import { open, unlink } from "node:fs/promises";
import path from "node:path";
import { isObject as isRecord } from "../json/json-values.js";
import { writeFileAtomic } from "./atomic-write.js";
import { StoreError } from "./store-error.js";
import { usageLogFile } from "./usage-files.js";

export interface PeriodMark {
  rows: number;
  credits: number;
  bytes: number;
}

/** What a log holds: everything when it was read, only its size when it was measured. */
export type LogReading = { bytes: number } & Partial<Pick<PeriodMark, "rows" | "credits">>;

export type PeriodMarks = Map<string, PeriodMark>;

const VERSION = 1;
/** How often the marks are snapshotted while rows are written. */
const SNAPSHOT_INTERVAL_MS = 1000;
/** How old a snapshot must be before it is saved while running (see UsageWatermark). */
export const SETTLE_MS = 60_000;

/** The marks on disk; null when the file does not exist (a fresh home, or one from before marks). */
export function readWatermark(file: string): PeriodMarks | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new StoreError(`usage watermark ${file} cannot be read (${(error as Error).message}); refusing to start`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new StoreError(
      `usage watermark ${file} is corrupt (${(error as Error).message}); refusing to start — restore it from a backup, or delete it to rebuild it from the usage logs as they are`,
    );
  }
  const marks = parseMarks(data);
  if (!marks) {
    throw new StoreError(
      `usage watermark ${file} is corrupt (not a gw usage watermark); refusing to start — restore it from a backup, or delete it to rebuild it from the usage logs as they are`,
    );
  }
  return marks;
}

function parseMarks(data: unknown): PeriodMarks | null {
  if (!isRecord(data) || data.version !== VERSION || !isRecord(data.periods)) return null;
  const marks: PeriodMarks = new Map();
  for (const [period, mark] of Object.entries(data.periods)) {
    if (!/^\d{4}-\d{2}$/.test(period) || !isRecord(mark) || !isCount(mark.rows) || !isCount(mark.credits) || !isCount(mark.bytes)) return null;
    marks.set(period, { rows: mark.rows, credits: mark.credits, bytes: mark.bytes });
  }
  return marks;
}

export function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function serialize(marks: PeriodMarks): string {
  const periods = Object.fromEntries([...marks.entries()].sort(([a], [b]) => a.localeCompare(b)));
  return `${JSON.stringify({ version: VERSION, periods }, null, 2)}\n`;
}

/**
 * Refuse when a period's log holds less than the mark says was written: it was deleted, cut short
 * or replaced by an older copy. `found` has an entry for every log that exists.
 */
export function assertLogsReachMark(file: string, marks: PeriodMarks, found: Map<string, LogReading>, usageDirectory: string): void {
  const shortfalls: string[] = [];
  for (const [period, mark] of [...marks.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const log = found.get(period);
    if (log && reaches(log, mark)) continue;
    if (!log && mark.rows === 0 && mark.credits === 0) continue;
    const recorded = `the mark records ${describeMark(mark)} written to it`;
    shortfalls.push(
      log
        ? `usage log ${usageLogFile(usageDirectory, period)} has ${describeMark(log)}, less than ${recorded}`
        : `usage log ${usageLogFile(usageDirectory, period)} is missing, but ${recorded}`,
    );
  }
  if (shortfalls.length === 0) return;
  throw new StoreError(
    `${shortfalls.join("; ")} (high-water mark: ${file}). Refusing to start: billed usage was lost and balances would be reset. ` +
      `Restore the usage log from a backup; or, to accept the loss deliberately, delete ${file} (it is rebuilt from the logs as they are) and start again.`,
  );
}

function reaches(log: LogReading, mark: PeriodMark): boolean {
  if (log.rows !== undefined && log.credits !== undefined) return log.rows >= mark.rows && log.credits >= mark.credits;
  return log.bytes >= mark.bytes;
}

function describeMark(mark: LogReading): string {
  if (mark.rows === undefined || mark.credits === undefined) return `${mark.bytes} bytes`;
  return `${mark.rows} ${mark.rows === 1 ? "row" : "rows"} (${mark.credits} credits, ${mark.bytes} bytes)`;
}

/**
 * The marks in memory, raised as rows are acknowledged and saved in the background.
 *
 * While the server runs, the mark on disk claims only rows written at least `settleMs` ago
 * (default a minute). The log is appended without fsync (an fdatasync a second cost a third of the
 * chat path's throughput), so a power cut can take its last seconds; Linux writes dirty pages
 * back within about 35 s, so a mark that far behind never claims rows the log could lose, and a
 * start after a power cut is not refused. Deleting or cutting the log by more than that minute
 * still is. A clean close syncs the log once and saves the exact mark.
 */
export class UsageWatermark {
  /** Periods written by this process: fsynced at close, before the exact mark is saved. */
  private readonly writtenPeriods = new Set<string>();
  /** The marks as they were at each snapshot, oldest first, waiting to be old enough to save. */
  private readonly snapshots: Array<{ at: number; text: string }> = [];
  private savedText: string;
  private timer: NodeJS.Timeout | null = null;
  private saving = false;
  private lastSnapshotAt = 0;
  private closed = false;

  /**
   * `marks` is the baseline: what the logs hold at open (checked to reach the mark on disk). It is
   * saved at once when it differs from `onDisk` (a fresh home, an upgrade, logs that grew).
   */
  constructor(
    readonly file: string,
    private readonly usageDirectory: string,
    private readonly marks: PeriodMarks,
    onDisk: PeriodMarks | null,
    private readonly settleMs = SETTLE_MS,
  ) {
    this.savedText = onDisk === null ? "" : serialize(onDisk);
    const changed = [...marks].filter(([period, mark]) => {
      const saved = onDisk?.get(period);
      return !saved || saved.rows !== mark.rows || saved.credits !== mark.credits || saved.bytes !== mark.bytes;
    });
    if (serialize(marks) !== this.savedText) this.saveNow(changed.map(([period]) => period));
  }

  /** Rows whose write succeeded. Saved later by a timer, never on the caller's path. */
  acknowledged(period: string, rows: number, credits: number, bytes: number): void {
    const mark = this.marks.get(period) ?? { rows: 0, credits: 0, bytes: 0 };
    this.marks.set(period, { rows: mark.rows + rows, credits: mark.credits + credits, bytes: mark.bytes + bytes });
    this.writtenPeriods.add(period);
    this.schedule(Math.max(0, this.lastSnapshotAt + SNAPSHOT_INTERVAL_MS - Date.now()));
  }

  /** A log first read after open (restored while running): the mark is at least what it holds. */
  raiseTo(period: string, found: PeriodMark): void {
    const mark = this.marks.get(period) ?? { rows: 0, credits: 0, bytes: 0 };
    this.marks.set(period, { rows: Math.max(mark.rows, found.rows), credits: Math.max(mark.credits, found.credits), bytes: Math.max(mark.bytes, found.bytes) });
  }

  /** Sync the logs written, then save the exact mark, synchronously; no background save lands after it. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    try {
      this.saveNow([...this.writtenPeriods]);
    } catch {
      // The rows are in the log; a mark that lags is a lower bound and loses nothing.
    }
  }

  private schedule(wait: number): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.tick();
    }, wait);
    this.timer.unref();
  }

  /** Take a snapshot of the marks; save the newest one that has settled; come back for the rest. */
  private tick(): void {
    const now = Date.now();
    const text = serialize(this.marks);
    if (text !== (this.snapshots.at(-1)?.text ?? this.savedText)) this.snapshots.push({ at: now, text });
    this.lastSnapshotAt = now;
    let settled: string | undefined;
    let settledAt = 0;
    for (let oldest = this.snapshots[0]; oldest !== undefined && oldest.at <= now - this.settleMs; oldest = this.snapshots[0]) {
      this.snapshots.shift();
      ({ at: settledAt, text: settled } = oldest);
    }
    if (settled !== undefined && settled !== this.savedText) {
      // A save still under way: this one waits for the next tick.
      if (this.saving) this.snapshots.unshift({ at: settledAt, text: settled });
      else void this.saveInBackground(settled);
    }
    const next = this.snapshots[0];
    if (next) this.schedule(Math.max(SNAPSHOT_INTERVAL_MS, next.at + this.settleMs - now));
  }

  private saveNow(syncPeriods: string[]): void {
    const text = serialize(this.marks);
    if (text === this.savedText) return;
    for (const period of syncPeriods) syncFileNow(usageLogFile(this.usageDirectory, period));
    if (syncPeriods.length > 0) syncDirectoryNow(this.usageDirectory);
    writeFileAtomic(this.file, text);
    this.savedText = text;
  }

  /** One at a time: temp file + fsync + rename (the log is not synced: see the class comment). */
  private async saveInBackground(text: string): Promise<void> {
    this.saving = true;
    const temporary = path.join(path.dirname(this.file), `.${path.basename(this.file)}.${process.pid}.background.tmp`);
    try {
      const handle = await open(temporary, "w", 0o600);
      try {
        await handle.writeFile(text);
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (this.closed) {
        // close() saved a newer mark meanwhile; renaming this one over it would move it back.
        await unlink(temporary).catch(() => undefined);
        return;
      }
      // Synchronous, on the main thread (a rename is metadata only): close() can then never be
      // overtaken by an older rename still queued in the thread pool.
      renameSync(temporary, this.file);
      this.savedText = text;
    } catch {
      // Disk full, permissions: the mark lags (still a lower bound); a later snapshot tries again.
    } finally {
      this.saving = false;
    }
  }
}

function syncFileNow(file: string): void {
  const fd = openSync(file, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function syncDirectoryNow(directory: string): void {
  try {
    syncFileNow(directory);
  } catch {
    // Not every platform can fsync a directory (Windows); the file's own sync is what matters most.
  }
}
