// Reading the usage log for reports (`gw usage`), streaming: the months that overlap a time range
// are read chunk by chunk and handed over row by row, so a month of a million rows never sits in
// memory. Rows are judged by the rules the gateway itself uses when it opens the log
// (usage-log.ts): a line that is not JSON is corruption, a row with invalid credits or agent is
// skipped with a warning, and an unterminated last line (a write that was never acknowledged) is
// ignored (docs/decisions.md §15).
import { existsSync, statSync } from "node:fs";
import { type AgentSums, readCheckpoint } from "./usage-checkpoint.js";
import { usageLogFile } from "./usage-files.js";
import { type LinePosition, readLines, readLinesBackward } from "./usage-lines.js";
import { corruptLineError, rowProblem, skippedRowWarning, UsageLog, type UsageRow } from "./usage-log.js";
import type { DimensionSums } from "./usage-sums.js";

/** Instants in milliseconds since the epoch: `since` inclusive, `until` exclusive. */
export interface UsageRange {
  since: number;
  until: number;
}

/** The part of one month's log a report reads: its bytes as they were when the report began. */
export interface UsageLogSlice {
  file: string;
  period: string;
  bytes: number;
  /** The whole month lies inside the range: every valid row counts, whatever its time says. */
  whole: boolean;
  /** Read from here (a line's start) rather than from the start: what a checkpoint counted is not read again. */
  from?: LinePosition;
}

/**
 * Which logs overlap the range, and how long each is now. Reading a report twice from the same
 * slices sees the same rows, even while the server appends.
 */
export function usageLogSlices(directory: string, range: UsageRange): UsageLogSlice[] {
  const slices: UsageLogSlice[] = [];
  for (const period of UsageLog.periods(directory)) {
    const overlap = periodOverlap(period, range);
    if (overlap === "none") continue;
    const file = usageLogFile(directory, period);
    if (!existsSync(file)) continue;
    slices.push({ file, period, bytes: statSync(file).size, whole: overlap === "whole" });
  }
  return slices;
}

/** How a month (YYYY-MM) lies in a range: not at all, in part, or whole (every valid row of it counts, whatever its time says). */
export function periodOverlap(period: string, range: UsageRange): "none" | "part" | "whole" {
  const { since: start, until: end } = periodRange(period);
  if (end <= range.since || start >= range.until) return "none";
  return start >= range.since && end <= range.until ? "whole" : "part";
}

/** A month (YYYY-MM, UTC) as a range: a reading of it takes its log whole. */
export function periodRange(period: string): UsageRange {
  const year = Number(period.slice(0, 4));
  const month = Number(period.slice(5, 7));
  return { since: Date.UTC(year, month - 1, 1), until: Date.UTC(year, month, 1) };
}

/**
 * One row's JSON as a report judges it, by the gateway's own rules (`rowProblem`): the row when it
 * counts in the range; the problem (a string) of an invalid row that may lie in the range (its
 * time in it, or unreadable; in a `whole` month always), to be reported; null for a row outside
 * the range, valid or not. Throws SyntaxError for text that is not JSON: the caller names where.
 */
export function judgeRow(text: string, whole: boolean, range: UsageRange): UsageRow | string | null {
  const row: unknown = JSON.parse(text);
  const problem = rowProblem(row);
  const time = whole ? 0 : timeOf(row);
  if (problem) return whole || Number.isNaN(time) || inRange(time, range) ? problem : null;
  if (!whole && !inRange(time, range)) return null;
  return row as UsageRow;
}

/**
 * The valid rows of the slices whose time lies in the range, in batches (one per chunk read), so
 * a caller can wait for its output between batches. In a month only partly in the range, a row
 * whose time does not parse is left out: it cannot be placed. `onSkipped` gets a message naming
 * file and line for each invalid row that may lie in the range (its time in it, or unreadable).
 * Throws StoreError at a complete line that is not JSON.
 */
export async function* usageRows(
  slices: UsageLogSlice[],
  range: UsageRange,
  onSkipped: (warning: string) => void = () => undefined,
): AsyncGenerator<UsageRow[]> {
  for (const slice of slices) {
    for await (const lines of readLines(slice.file, slice.bytes, slice.from)) {
      const batch: UsageRow[] = [];
      for (const { text, number } of lines) {
        let judged: UsageRow | string | null;
        try {
          judged = judgeRow(text, slice.whole, range);
        } catch {
          throw corruptLineError(slice.file, number);
        }
        // An invalid row is reported when it may lie in the range: its time can be as wrong as the rest.
        if (typeof judged === "string") onSkipped(skippedRowWarning(slice.file, number, judged));
        else if (judged) batch.push(judged);
      }
      if (batch.length > 0) yield batch;
    }
  }
}

/**
 * A whole month as its checkpoint (usage-checkpoint.ts) sums it, and what came after: for a
 * report that needs only the sums per agent and the last rows, so a month of a million rows is
 * not read again for it.
 */
export interface UsageSummary {
  /** Valid rows, credits and overage per agent as the rows name it (an id; an older row's name), up to the checkpoint. */
  agents: ReadonlyMap<string, AgentSums>;
  /** The same per day, model, key and endpoint, over every agent, up to the checkpoint. */
  groups: Readonly<DimensionSums>;
  /** The valid rows after the checkpoint, in batches, as `usageRows` hands them over. */
  rowsAfter: AsyncIterable<UsageRow[]>;
  /** Up to `count` of the last valid rows up to the checkpoint that `keep` keeps, oldest first. */
  lastRowsBefore(count: number, keep: (row: UsageRow) => boolean): Promise<UsageRow[]>;
}

/**
 * The summary of a range that is one whole month of the log with a checkpoint that fits it (and
 * counts no more than the slice holds); undefined otherwise, and the caller reads the rows.
 * `onSkipped` gets the invalid rows the checkpoint counted at once, in line order, as reading the
 * rows would name them; those after it as `rowsAfter` reads them.
 */
export function usageSummary(
  directory: string,
  slices: UsageLogSlice[],
  range: UsageRange,
  onSkipped: (warning: string) => void = () => undefined,
): UsageSummary | undefined {
  const [slice] = slices;
  if (slices.length !== 1 || !slice?.whole || slice.from) return undefined;
  const checkpoint = readCheckpoint(directory, slice.period, slice.file);
  if (!checkpoint || checkpoint.bytes > slice.bytes) return undefined;
  for (const { line, problem } of checkpoint.skipped) onSkipped(skippedRowWarning(slice.file, line, problem));
  return {
    agents: checkpoint.agents,
    groups: checkpoint.groups,
    rowsAfter: usageRows([{ ...slice, from: checkpoint }], range, onSkipped),
    async lastRowsBefore(count, keep) {
      const rows: UsageRow[] = [];
      if (count <= 0) return rows;
      for await (const { text, number } of readLinesBackward(slice.file, checkpoint)) {
        let judged: UsageRow | string | null;
        try {
          judged = judgeRow(text, true, range);
        } catch {
          throw corruptLineError(slice.file, number);
        }
        // An invalid row was named with the checkpoint's.
        if (typeof judged === "string" || !judged || !keep(judged)) continue;
        rows.push(judged);
        if (rows.length === count) break;
      }
      return rows.reverse();
    },
  };
}

/** A row's time in milliseconds, NaN when it has none that parses. */
function timeOf(row: unknown): number {
  const time = typeof row === "object" && row !== null ? (row as { time?: unknown }).time : undefined;
  return typeof time === "string" ? Date.parse(time) : Number.NaN;
}

function inRange(time: number, range: UsageRange): boolean {
  return time >= range.since && time < range.until;
}
