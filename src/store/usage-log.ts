// Append-only usage log: one JSON line per billed upstream call, one file per period
// (calendar month, UTC). Rows are written with a synchronous append before the response is
// finished, so a SIGKILL never loses an acknowledged row. Totals per agent are computed once
// when the log is opened and then kept current in memory; nothing rescans the log per request.
// The month's totals are checkpointed (usage-checkpoint.ts) at open, every minute while rows
// are written, and at close, so a start reads only the rows written since the last checkpoint.
// A high-water mark (usage-watermark.ts) remembers what was written, so a log that is deleted or
// cut short refuses to open instead of reading as "nothing spent".
import { closeSync, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, readdirSync, statSync, writeSync } from "node:fs";
import { KeySpendHistory, type KeyTotals } from "./key-spend-history.js";
import { StoreError } from "./store-error.js";
import { readCheckpoint, type SkippedLine, saveCheckpoint, saveCheckpointInBackground, type UsageCheckpoint } from "./usage-checkpoint.js";
import { usageLogFile, usageWatermarkFile } from "./usage-files.js";
import { readLinesSync, someLineHolding } from "./usage-lines.js";
import { addToGroups, emptyDimensionSums, overageOf } from "./usage-sums.js";
import { assertLogsReachMark, isCount, type LogReading, type PeriodMarks, readWatermark, UsageWatermark } from "./usage-watermark.js";

export interface UsageRow {
  id: string;
  time: string;
  agent: string;
  keyPrefix: string;
  endpoint: string;
  model: string;
  provider: string;
  units: Record<string, number>;
  credits: number;
  requestId: string;
  /**
   * Credits the upstream's usage came to beyond what the call held, not billed: the upstream
   * reported or wrote more than the output cap it was sent (docs/decisions.md §3). Rows without
   * any have none.
   */
  overage?: number;
  /** An answer the response cache replayed (docs/decisions.md §22): no upstream call; `units` are the repeated call's. */
  cached?: true;
  /** The batch whose line this call was (docs/decisions.md §23), priced at the batch rate. */
  batch?: string;
  /** The request's tags (`x-gw-tags`, OpenAI `metadata` pairs; docs/decisions.md §24). Rows without any have none. */
  tags?: readonly string[];
}

let cachedPeriod = { start: 0, end: 0, name: "" };

/** The period (calendar month, UTC) of a date, e.g. "2026-11". Cached: called on every request. */
export function periodOf(date: Date): string {
  const time = date.getTime();
  if (time >= cachedPeriod.start && time < cachedPeriod.end) return cachedPeriod.name;
  const start = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  const end = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  cachedPeriod = { start, end, name: date.toISOString().slice(0, 7) };
  return cachedPeriod.name;
}

export interface PeriodRows {
  rows: UsageRow[];
  /** One per row left out (invalid credits or agent), naming the file and line. */
  warnings: string[];
}

/**
 * The usage log as billing reads and writes it: rows appended, credits totalled per agent and
 * key. This process's log files implement it (UsageLog); instances sharing their agents' balances
 * share the totals through another implementation.
 */
export interface UsageRecords {
  append(row: UsageRow): Promise<void>;
  creditsUsed(agentId: string, period: string): number;
  keyCreditsUsed(keyPrefix: string, period: string): number;
  keyCreditsLifetime(keyPrefix: string, period: string): number;
  /** Whether a row named in advance was written in one of these periods (a job recovered after a restart asks). */
  hasRow(rowId: string, periods: readonly string[]): Promise<boolean>;
}

/** How often a running server checkpoints the totals of the month it writes, when it wrote any rows since. */
const CHECKPOINT_INTERVAL_MS = 60_000;
/** A start that read this much of its month past the checkpoint (or without one) saves a new checkpoint at once. */
const CHECKPOINT_AT_OPEN_BYTES = 1 << 20;

export class UsageLog implements UsageRecords {
  /**
   * Rows skipped when the log was opened because their credits or agent are invalid, one message
   * each naming file and line: the gateway logs them. They are never counted in a balance.
   */
  readonly warnings: string[] = [];
  private fd: number | null = null;
  /** Rows of this turn of the event loop, written together by one syscall (group commit). */
  private pendingLines: string[] = [];
  private pendingWaiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  private pendingCredits = 0;
  private fdPeriod = "";
  private flushQueued = false;
  private readonly tasksAfterFlush: Array<() => void> = [];
  /** Told after each group write: how long it took, and whether it failed (the server's metrics). */
  onWrite?: (durationMs: number, failed: boolean) => void;
  /** period -> credits used per agent id and per key prefix, and how far into its log they count */
  private readonly totals = new Map<string, PeriodTotals>();
  private readonly history: KeySpendHistory;
  /** The months before the current one that have a log (listed once per month). */
  private earlierMonths = { period: "", months: [] as string[] };
  private readonly checkpointTimer: NodeJS.Timeout;
  private savingCheckpoint = false;

  private constructor(
    readonly directory: string,
    private readonly watermark: UsageWatermark,
  ) {
    this.history = new KeySpendHistory(directory, (period) => this.sumMonthByKey(period));
    this.checkpointTimer = setInterval(() => this.checkpointWhileRunning(), CHECKPOINT_INTERVAL_MS);
    this.checkpointTimer.unref();
  }

  /**
   * Open for appending and load the current period's totals (from its checkpoint and the rows
   * after it, or the whole log). Refuses (StoreError) a log that is corrupt, or one that is
   * missing or holds fewer rows or credits than the high-water mark says were written. A home
   * without a mark (fresh, or from before marks) gets one from its logs.
   */
  static open(directory: string, now = new Date(), watermarkFile = usageWatermarkFile(directory), options: { markSettleMs?: number } = {}): UsageLog {
    const onDisk = readWatermark(watermarkFile);
    const current = periodOf(now);
    const found = new Map<string, LogReading>();
    const baseline: PeriodMarks = new Map(onDisk ?? []);
    const warnings: string[] = [];
    let currentCount: CountedLog | null = null;
    for (const period of new Set([...UsageLog.periods(directory), ...(onDisk?.keys() ?? [])])) {
      const file = usageLogFile(directory, period);
      if (!existsSync(file)) continue;
      const mark = onDisk?.get(period);
      if (period !== current && mark) {
        // An earlier month the mark knows: measured, not read (a start must not grow with history).
        const bytes = statSync(file).size;
        found.set(period, { bytes });
        baseline.set(period, { ...mark, bytes: Math.max(mark.bytes, bytes) });
        continue;
      }
      // This month (its totals are the balances), or a log the mark has never seen (an upgrade).
      const counted = countLog(directory, period, file);
      const reading = { rows: counted.totals.rows, credits: counted.totals.credits, bytes: counted.totals.bytes };
      found.set(period, reading);
      baseline.set(period, reading);
      warnings.push(...warningsOf(file, counted.totals.skipped));
      if (period === current) currentCount = counted;
    }
    if (onDisk) assertLogsReachMark(watermarkFile, onDisk, found, directory);
    mkdirSync(directory, { recursive: true });
    if (currentCount && currentCount.totals.bytes < currentCount.fileBytes) dropTornTail(usageLogFile(directory, current), currentCount.totals.bytes);
    // The logs reach the mark, so what they hold is the new baseline.
    const log = new UsageLog(directory, new UsageWatermark(watermarkFile, directory, baseline, onDisk, options.markSettleMs));
    const totals = currentCount?.totals ?? emptyTotals();
    log.totals.set(current, totals);
    log.warnings.push(...warnings);
    // Read far past its checkpoint: checkpointed now, so the next start (even after a crash) does not read it again.
    if (totals.bytes - totals.checkpointed >= CHECKPOINT_AT_OPEN_BYTES) log.checkpointNow(current);
    return log;
  }

  /**
   * Count the row at once (balances never lag) and write it with the other rows of this turn of
   * the event loop. Resolves once the bytes are in the file: callers answer their client only
   * then, so a SIGKILL cannot lose a row whose response was sent. A row that would corrupt a
   * balance (credits not a whole number >= 0, no agent) is refused with a StoreError, unwritten.
   */
  append(row: UsageRow): Promise<void> {
    const problem =
      rowProblem(row) ?? (typeof row.time === "string" && /^\d{4}-\d{2}/.test(row.time) ? null : `time ${describe(row.time)} does not start with YYYY-MM`);
    if (problem) throw new StoreError(`usage row ${describe(row.id)} refused, nothing written: ${problem}`);
    const period = row.time.slice(0, 7);
    addCredits(this.periodTotals(period), row);
    if (period !== this.fdPeriod && this.pendingLines.length > 0) this.flush();
    this.fileFor(period);
    this.pendingLines.push(`${JSON.stringify(row)}\n`);
    this.pendingCredits += row.credits;
    return new Promise((resolve, reject) => {
      this.pendingWaiters.push({ resolve, reject });
      this.queueFlush();
    });
  }

  /**
   * Run `task` in this turn's check phase once the turn's rows are written and the code waiting
   * on them has run (Node runs pending promise callbacks between two immediates). A stream hands
   * its socket flush here: the closing frame, which waits for the usage row, then leaves with the
   * last batch in one write, at the same point of the turn where every other response of the turn
   * is answered.
   */
  afterTurnWrites(task: () => void): void {
    this.queueFlush(); // queued first, so it runs first
    this.tasksAfterFlush.push(task);
    if (this.tasksAfterFlush.length === 1) {
      setImmediate(() => {
        for (const queued of this.tasksAfterFlush.splice(0)) queued();
      });
    }
  }

  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      this.flush();
    });
  }

  private flush(): void {
    const lines = this.pendingLines;
    const waiters = this.pendingWaiters;
    if (lines.length === 0) return;
    const credits = this.pendingCredits;
    this.pendingLines = [];
    this.pendingWaiters = [];
    this.pendingCredits = 0;
    const started = performance.now();
    // Where the log now ends, as far as the totals count it.
    const totals = this.totals.get(this.fdPeriod)!;
    try {
      const text = lines.length === 1 ? lines[0]! : lines.join("");
      const bytes = writeSync(this.fd!, text);
      this.watermark.acknowledged(this.fdPeriod, lines.length, credits, bytes);
      totals.bytes += bytes;
      totals.lines += lines.length;
      totals.rows += lines.length;
      totals.credits += credits;
      // A short write leaves rows counted that the log does not hold: no checkpoint from these totals.
      if (bytes !== Buffer.byteLength(text)) totals.exact = false;
      this.onWrite?.(performance.now() - started, false);
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      totals.exact = false;
      this.onWrite?.(performance.now() - started, true);
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  creditsUsed(agentId: string, period: string): number {
    return this.periodTotals(period).agents.get(agentId)?.credits ?? 0;
  }

  /** Credits billed to one key (by its visible prefix) in a period. */
  keyCreditsUsed(keyPrefix: string, period: string): number {
    return this.periodTotals(period).keys.get(keyPrefix) ?? 0;
  }

  /** Credits billed to one key over every month up to and including `period` (a lifetime budget). */
  keyCreditsLifetime(keyPrefix: string, period: string): number {
    let credits = this.keyCreditsUsed(keyPrefix, period);
    if (this.earlierMonths.period !== period) this.earlierMonths = { period, months: UsageLog.periods(this.directory).filter((month) => month < period) };
    for (const month of this.history.totals(this.earlierMonths.months)) credits += month.get(keyPrefix) ?? 0;
    return credits;
  }

  /**
   * Read from the files, without blocking: only a job recovered after a restart asks, never the
   * request path. The bytes are searched for the id, and only the lines that hold it are judged
   * (a valid row with that id), so a month of a million rows is not parsed for one lookup.
   */
  async hasRow(rowId: string, periods: readonly string[]): Promise<boolean> {
    const needle = JSON.stringify(rowId);
    for (const period of periods) {
      const file = usageLogFile(this.directory, period);
      if (!existsSync(file)) continue;
      if (await someLineHolding(file, statSync(file).size, needle, (text) => isRowWithId(text, rowId))) return true;
    }
    return false;
  }

  private sumMonthByKey(period: string): KeyTotals {
    const loaded = this.totals.get(period);
    if (loaded) return new Map(loaded.keys);
    const file = usageLogFile(this.directory, period);
    return existsSync(file) ? countLog(this.directory, period, file).totals.keys : new Map();
  }

  /** Write the pending rows, close the file and save the high-water mark and the checkpoints (synchronously). */
  close(): void {
    clearInterval(this.checkpointTimer);
    this.closeFile();
    this.watermark.close();
    // After the mark's close, which synced the logs written; a checkpoint claiming more than a power cut left is ignored anyway.
    for (const period of this.totals.keys()) this.checkpointNow(period);
  }

  /** The valid rows of a period, for reports (`gw usage`), and a warning per row left out. */
  static readPeriod(directory: string, period: string): PeriodRows {
    const file = usageLogFile(directory, period);
    if (!existsSync(file)) return { rows: [], warnings: [] };
    const rows: UsageRow[] = [];
    const skipped: SkippedLine[] = [];
    readLinesSync(file, { bytes: 0, lines: 0 }, (text, number) => {
      const row = parseRow(text, file, number);
      const problem = rowProblem(row);
      if (problem) skipped.push({ line: number, problem });
      else rows.push(row as UsageRow);
    });
    return { rows, warnings: warningsOf(file, skipped) };
  }

  /** The valid rows of a period. Not used on the request path. */
  static readRows(directory: string, period: string): UsageRow[] {
    return UsageLog.readPeriod(directory, period).rows;
  }

  static periods(directory: string): string[] {
    if (!existsSync(directory)) return [];
    return readdirSync(directory)
      .filter((name) => /^\d{4}-\d{2}\.jsonl$/.test(name))
      .map((name) => name.slice(0, 7))
      .sort();
  }

  private periodTotals(period: string): PeriodTotals {
    return this.totals.get(period) ?? this.loadPeriod(period, { repairTail: false });
  }

  /** A period not loaded at open (the month turned while running). */
  private loadPeriod(period: string, options: { repairTail: boolean }): PeriodTotals {
    const file = usageLogFile(this.directory, period);
    let totals = emptyTotals();
    if (existsSync(file)) {
      const counted = countLog(this.directory, period, file);
      totals = counted.totals;
      if (totals.bytes < counted.fileBytes && options.repairTail) dropTornTail(file, totals.bytes);
      this.warnings.push(...warningsOf(file, totals.skipped));
      this.watermark.raiseTo(period, { rows: totals.rows, credits: totals.credits, bytes: totals.bytes });
    }
    this.totals.set(period, totals);
    return totals;
  }

  private fileFor(period: string): number {
    if (this.fd !== null && this.fdPeriod === period) return this.fd;
    const previous = this.fdPeriod;
    this.closeFile();
    // The month turned: its last checkpoint, so that a report or a lifetime budget reads it from there.
    if (previous !== "" && period > previous) this.checkpointNow(previous);
    if (!this.totals.has(period)) this.loadPeriod(period, { repairTail: true });
    this.fd = openSync(usageLogFile(this.directory, period), "a", 0o600);
    this.fdPeriod = period;
    return this.fd;
  }

  private closeFile(): void {
    this.flush();
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /** The period's totals as a checkpoint, when they count exactly the log as it is and it grew since the last one. */
  private checkpointable(period: string): PeriodTotals | null {
    const totals = this.totals.get(period);
    if (!totals?.exact || totals.bytes === totals.checkpointed || this.pendingLines.length > 0) return null;
    try {
      // Anything else in the file (a line a crash tore, a short write) and these totals would not be the log's.
      const size = this.fd !== null && this.fdPeriod === period ? fstatSync(this.fd).size : statSync(usageLogFile(this.directory, period)).size;
      if (size !== totals.bytes) {
        totals.exact = false;
        return null;
      }
    } catch {
      return null;
    }
    return totals;
  }

  private checkpointNow(period: string): void {
    const totals = this.checkpointable(period);
    if (!totals) return;
    saveCheckpoint(this.directory, period, usageLogFile(this.directory, period), totals);
    totals.checkpointed = totals.bytes;
  }

  /** Every minute, off the request path: the month being written, when it grew. */
  private checkpointWhileRunning(): void {
    if (this.savingCheckpoint || this.fd === null) return;
    const period = this.fdPeriod;
    const totals = this.checkpointable(period);
    if (!totals) return;
    this.savingCheckpoint = true;
    totals.checkpointed = totals.bytes;
    void saveCheckpointInBackground(this.directory, period, usageLogFile(this.directory, period), totals).finally(() => {
      this.savingCheckpoint = false;
    });
  }
}

/** A period's credits per agent and key, and the part of its log they count. */
interface PeriodTotals extends UsageCheckpoint {
  /** False once a write failed or fell short: rows are counted that the log may not hold, so no checkpoint is saved from these. */
  exact: boolean;
  /** `bytes` at the last checkpoint read or saved. */
  checkpointed: number;
}

function emptyTotals(): PeriodTotals {
  return {
    agents: new Map(),
    keys: new Map(),
    groups: emptyDimensionSums(),
    bytes: 0,
    lines: 0,
    rows: 0,
    credits: 0,
    skipped: [],
    exact: true,
    checkpointed: 0,
  };
}

/** Count a valid row in its agent's and its key's credits, and in the sums a report reads (usage-sums.ts). */
function addCredits(totals: Pick<PeriodTotals, "agents" | "keys" | "groups">, row: UsageRow): void {
  const overage = row.overage === undefined ? 0 : overageOf(row);
  const sums = totals.agents.get(row.agent);
  if (sums) {
    sums.rows += 1;
    sums.credits += row.credits;
    sums.overage += overage;
  } else {
    totals.agents.set(row.agent, { rows: 1, credits: row.credits, overage });
  }
  if (typeof row.keyPrefix === "string") totals.keys.set(row.keyPrefix, (totals.keys.get(row.keyPrefix) ?? 0) + row.credits);
  addToGroups(totals.groups, row, overage);
}

interface CountedLog {
  totals: PeriodTotals;
  /** The file's size when read: more than `totals.bytes` when its last line is incomplete. */
  fileBytes: number;
}

/**
 * A period's totals: from its checkpoint (when it fits the log) plus every complete line after
 * it, or from the whole log. A line that is not JSON is corruption (StoreError); a JSON row with
 * invalid credits or agent is left out and named, so one bad row never disables a balance or
 * stops the server. An unterminated last line was never acknowledged and is not counted.
 */
function countLog(directory: string, period: string, file: string): CountedLog {
  const checkpoint = readCheckpoint(directory, period, file);
  const totals = emptyTotals();
  if (checkpoint) Object.assign(totals, checkpoint, { checkpointed: checkpoint.bytes });
  const end = readLinesSync(file, totals, (text, number) => {
    const row = parseRow(text, file, number);
    const problem = rowProblem(row);
    if (problem) {
      totals.skipped.push({ line: number, problem });
      return;
    }
    totals.rows += 1;
    totals.credits += (row as UsageRow).credits;
    addCredits(totals, row as UsageRow);
  });
  totals.bytes = end.bytes;
  totals.lines = end.lines;
  return { totals, fileBytes: end.size };
}

function parseRow(text: string, file: string, number: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw corruptLineError(file, number);
  }
}

/** A line of the log that is not JSON: corruption, which refuses a start and a report alike. */
export function corruptLineError(file: string, line: number): StoreError {
  return new StoreError(`usage log ${file} is corrupt at line ${line}; refusing to start — restore it from a backup`);
}

/** What is said of a row left out of every balance (invalid credits or agent). */
export function skippedRowWarning(file: string, line: number, problem: string): string {
  return `usage log ${file} line ${line}: ${problem}; row skipped, not counted in any balance`;
}

function warningsOf(file: string, skipped: readonly SkippedLine[]): string[] {
  return skipped.map(({ line, problem }) => skippedRowWarning(file, line, problem));
}

/** Whether a line is a valid row with this id (a line that is not JSON is not). */
function isRowWithId(text: string, rowId: string): boolean {
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch {
    return false;
  }
  return rowProblem(row) === null && (row as UsageRow).id === rowId;
}

/** A torn last line (the process died inside a write that was never acknowledged): drop it. */
function dropTornTail(file: string, validLength: number): void {
  const fd = openSync(file, "r+");
  try {
    ftruncateSync(fd, validLength);
  } finally {
    closeSync(fd);
  }
}

/** Why a row cannot count toward a balance, or null when it can. */
export function rowProblem(row: unknown): string | null {
  if (typeof row !== "object" || row === null || Array.isArray(row)) return "not a JSON object";
  const { agent, credits } = row as Record<string, unknown>;
  if (typeof agent !== "string" || agent === "") return `agent ${describe(agent)} is not a non-empty string`;
  if (!isCount(credits)) return `credits ${describe(credits)} is not a whole number of micro-dollars >= 0`;
  return null;
}

function describe(value: unknown): string {
  if (value === undefined) return "(missing)";
  if (typeof value === "number") return String(value); // NaN and Infinity, which JSON would print as null
  return JSON.stringify(value) ?? String(value);
}
