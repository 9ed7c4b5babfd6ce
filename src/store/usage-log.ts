// Append-only usage log: one JSON line per billed upstream call, one file per period
// (calendar month, UTC). Rows are written with a synchronous append before the response is
// finished, so a SIGKILL never loses an acknowledged row. Totals per agent are computed once
// when the log is opened and then kept current in memory; nothing rescans the log per request.
// A high-water mark (usage-watermark.ts) remembers what was written, so a log that is deleted or
// cut short refuses to open instead of reading as "nothing spent".
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeSync } from "node:fs";
import { KeySpendHistory, type KeyTotals } from "./key-spend-history.js";
import { StoreError } from "./store-error.js";
import { usageLogFile, usageWatermarkFile } from "./usage-files.js";
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
  hasRow(rowId: string, periods: readonly string[]): boolean;
}

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
  /** period -> credits used per agent id and per key prefix */
  private readonly totals = new Map<string, PeriodTotals>();
  private readonly history: KeySpendHistory;
  /** The months before the current one that have a log (listed once per month). */
  private earlierMonths = { period: "", months: [] as string[] };

  private constructor(
    readonly directory: string,
    private readonly watermark: UsageWatermark,
  ) {
    this.history = new KeySpendHistory(directory, (period) => this.sumMonthByKey(period));
  }

  /**
   * Open for appending and load the current period's totals. Refuses (StoreError) a log that is
   * corrupt, or one that is missing or holds fewer rows or credits than the high-water mark says
   * were written. A home without a mark (fresh, or from before marks) gets one from its logs.
   */
  static open(directory: string, now = new Date(), watermarkFile = usageWatermarkFile(directory), options: { markSettleMs?: number } = {}): UsageLog {
    const onDisk = readWatermark(watermarkFile);
    const current = periodOf(now);
    const found = new Map<string, LogReading>();
    const baseline: PeriodMarks = new Map(onDisk ?? []);
    const warnings: string[] = [];
    const currentTotals = emptyTotals();
    let currentTail: { validLength: number; byteLength: number } | null = null;
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
      const text = readFileSync(file, "utf8");
      const scan = scanRows(text, file, period === current ? (row) => addCredits(currentTotals, row) : undefined);
      const reading = { rows: scan.rows, credits: scan.credits, bytes: scan.validLength };
      found.set(period, reading);
      baseline.set(period, reading);
      warnings.push(...scan.warnings);
      if (period === current) currentTail = { validLength: scan.validLength, byteLength: Buffer.byteLength(text) };
    }
    if (onDisk) assertLogsReachMark(watermarkFile, onDisk, found, directory);
    mkdirSync(directory, { recursive: true });
    if (currentTail && currentTail.validLength < currentTail.byteLength) dropTornTail(usageLogFile(directory, current), currentTail.validLength);
    // The logs reach the mark, so what they hold is the new baseline.
    const log = new UsageLog(directory, new UsageWatermark(watermarkFile, directory, baseline, onDisk, options.markSettleMs));
    log.totals.set(current, currentTotals);
    log.warnings.push(...warnings);
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
    try {
      const bytes = writeSync(this.fd!, lines.length === 1 ? lines[0]! : lines.join(""));
      this.watermark.acknowledged(this.fdPeriod, lines.length, credits, bytes);
      this.onWrite?.(performance.now() - started, false);
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      this.onWrite?.(performance.now() - started, true);
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  creditsUsed(agentId: string, period: string): number {
    return this.periodTotals(period).agents.get(agentId) ?? 0;
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

  /** Read from the files: only a job recovered after a restart asks, never the request path. */
  hasRow(rowId: string, periods: readonly string[]): boolean {
    return periods.some((period) => UsageLog.readRows(this.directory, period).some((row) => row.id === rowId));
  }

  private sumMonthByKey(period: string): KeyTotals {
    const loaded = this.totals.get(period);
    if (loaded) return new Map(loaded.keys);
    const totals = emptyTotals();
    const file = usageLogFile(this.directory, period);
    if (existsSync(file)) scanRows(readFileSync(file, "utf8"), file, (row) => addCredits(totals, row));
    return totals.keys;
  }

  /** Write the pending rows, close the file and save the high-water mark (synchronously). */
  close(): void {
    this.closeFile();
    this.watermark.close();
  }

  /** The valid rows of a period, for reports (`gw usage`), and a warning per row left out. */
  static readPeriod(directory: string, period: string): PeriodRows {
    const file = usageLogFile(directory, period);
    if (!existsSync(file)) return { rows: [], warnings: [] };
    const rows: UsageRow[] = [];
    const { warnings } = scanRows(readFileSync(file, "utf8"), file, (row) => rows.push(row));
    return { rows, warnings };
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
    const totals = emptyTotals();
    if (existsSync(file)) {
      const text = readFileSync(file, "utf8");
      const scan = scanRows(text, file, (row) => addCredits(totals, row));
      if (scan.validLength < Buffer.byteLength(text) && options.repairTail) dropTornTail(file, scan.validLength);
      this.warnings.push(...scan.warnings);
      this.watermark.raiseTo(period, { rows: scan.rows, credits: scan.credits, bytes: scan.validLength });
    }
    this.totals.set(period, totals);
    return totals;
  }

  private fileFor(period: string): number {
    if (this.fd !== null && this.fdPeriod === period) return this.fd;
    this.closeFile();
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
}

interface PeriodTotals {
  agents: Map<string, number>;
  keys: Map<string, number>;
}

function emptyTotals(): PeriodTotals {
  return { agents: new Map(), keys: new Map() };
}

function addCredits(totals: PeriodTotals, row: UsageRow): void {
  totals.agents.set(row.agent, (totals.agents.get(row.agent) ?? 0) + row.credits);
  if (typeof row.keyPrefix === "string") totals.keys.set(row.keyPrefix, (totals.keys.get(row.keyPrefix) ?? 0) + row.credits);
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

interface RowScan {
  /** Valid rows and their credits: what a balance counts and the high-water mark compares. */
  rows: number;
  credits: number;
  warnings: string[];
  /** Bytes up to the end of the last complete line. */
  validLength: number;
}

/**
 * Read every complete line. A line that is not JSON is corruption (StoreError); a JSON row with
 * invalid credits or agent is left out with a warning, so one bad row never disables a balance
 * or stops the server. An unterminated last line was never acknowledged and is ignored.
 */
function scanRows(text: string, file: string, onRow?: (row: UsageRow) => void): RowScan {
  const scan: RowScan = { rows: 0, credits: 0, warnings: [], validLength: 0 };
  let offset = 0;
  let lineNumber = 0;
  while (offset < text.length) {
    const end = text.indexOf("\n", offset);
    lineNumber += 1;
    if (end === -1) break; // no newline: the last write was cut short
    const line = text.slice(offset, end);
    offset = end + 1;
    if (!line.trim()) continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      throw new StoreError(`usage log ${file} is corrupt at line ${lineNumber}; refusing to start — restore it from a backup`);
    }
    const problem = rowProblem(row);
    if (problem) {
      scan.warnings.push(`usage log ${file} line ${lineNumber}: ${problem}; row skipped, not counted in any balance`);
      continue;
    }
    scan.rows += 1;
    scan.credits += (row as UsageRow).credits;
    onRow?.(row as UsageRow);
  }
  scan.validLength = Buffer.byteLength(text.slice(0, offset));
  return scan;
}
