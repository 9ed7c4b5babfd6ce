// Append-only usage log: one JSON line per billed upstream call, one file per period
// (calendar month, UTC). Rows are written with a synchronous append before the response is
// finished, so a SIGKILL never loses an acknowledged row. Totals per agent are computed once
// when the log is opened and then kept current in memory; nothing rescans the log per request.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeSync, ftruncateSync } from "node:fs";
import path from "node:path";
import { StoreError } from "./store-error.js";

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

export class UsageLog {
  private fd: number | null = null;
  /** Rows of this turn of the event loop, written together by one syscall (group commit). */
  private pendingLines: string[] = [];
  private pendingWaiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  private fdPeriod = "";
  private flushQueued = false;
  private readonly tasksAfterFlush: Array<() => void> = [];
  /** period -> agent id -> credits used */
  private readonly totals = new Map<string, Map<string, number>>();

  constructor(readonly directory: string) {}

  /** Open for appending and load the current period's totals. Refuses a corrupt log. */
  static open(directory: string, now = new Date()): UsageLog {
    const log = new UsageLog(directory);
    mkdirSync(directory, { recursive: true });
    log.loadPeriod(periodOf(now), { repairTail: true });
    return log;
  }

  /**
   * Count the row at once (balances never lag) and write it with the other rows of this turn of
   * the event loop. Resolves once the bytes are in the file: callers answer their client only
   * then, so a SIGKILL cannot lose a row whose response was sent.
   */
  append(row: UsageRow): Promise<void> {
    const period = row.time.slice(0, 7);
    const agents = this.periodTotals(period);
    agents.set(row.agent, (agents.get(row.agent) ?? 0) + row.credits);
    if (period !== this.fdPeriod && this.pendingLines.length > 0) this.flush();
    this.fileFor(period);
    this.pendingLines.push(`${JSON.stringify(row)}\n`);
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
    this.pendingLines = [];
    this.pendingWaiters = [];
    try {
      writeSync(this.fd!, lines.length === 1 ? lines[0]! : lines.join(""));
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  creditsUsed(agentId: string, period: string): number {
    return this.periodTotals(period).get(agentId) ?? 0;
  }

  close(): void {
    this.flush();
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /** Every row of a period, for reports (`gw usage`). Not used on the request path. */
  static readRows(directory: string, period: string): UsageRow[] {
    const file = path.join(directory, `${period}.jsonl`);
    if (!existsSync(file)) return [];
    return parseRows(readFileSync(file, "utf8"), file).rows;
  }

  static periods(directory: string): string[] {
    if (!existsSync(directory)) return [];
    return readdirSync(directory)
      .filter((name) => /^\d{4}-\d{2}\.jsonl$/.test(name))
      .map((name) => name.slice(0, 7))
      .sort();
  }

  private periodTotals(period: string): Map<string, number> {
    let agents = this.totals.get(period);
    if (!agents) {
      agents = this.loadPeriod(period, { repairTail: false });
    }
    return agents;
  }

  private loadPeriod(period: string, options: { repairTail: boolean }): Map<string, number> {
    const file = path.join(this.directory, `${period}.jsonl`);
    const agents = new Map<string, number>();
    if (existsSync(file)) {
      const text = readFileSync(file, "utf8");
      const { rows, validLength } = parseRows(text, file);
      if (validLength < Buffer.byteLength(text) && options.repairTail) {
        // A torn last line (the process died inside a write that was never acknowledged): drop it.
        const fd = openSync(file, "r+");
        ftruncateSync(fd, validLength);
        closeSync(fd);
      }
      for (const row of rows) agents.set(row.agent, (agents.get(row.agent) ?? 0) + row.credits);
    }
    this.totals.set(period, agents);
    return agents;
  }

  private fileFor(period: string): number {
    if (this.fd !== null && this.fdPeriod === period) return this.fd;
    this.close();
    if (!this.totals.has(period)) this.loadPeriod(period, { repairTail: true });
    this.fd = openSync(path.join(this.directory, `${period}.jsonl`), "a", 0o600);
    this.fdPeriod = period;
    return this.fd;
  }
}

function parseRows(text: string, file: string): { rows: UsageRow[]; validLength: number } {
  const rows: UsageRow[] = [];
  let offset = 0;
  let lineNumber = 0;
  while (offset < text.length) {
    const end = text.indexOf("\n", offset);
    lineNumber += 1;
    if (end === -1) {
      // No newline: the last write was cut short, so it was never acknowledged.
      break;
    }
    const line = text.slice(offset, end);
    if (line.trim()) {
      let row: UsageRow;
      try {
        row = JSON.parse(line) as UsageRow;
      } catch {
        throw new StoreError(`usage log ${file} is corrupt at line ${lineNumber}; refusing to start — restore it from a backup`);
      }
      if (typeof row.agent !== "string" || !Number.isInteger(row.credits)) {
        throw new StoreError(`usage log ${file} has an invalid row at line ${lineNumber}; refusing to start`);
      }
      rows.push(row);
    }
    offset = end + 1;
  }
  return { rows, validLength: Buffer.byteLength(text.slice(0, offset)) };
}
