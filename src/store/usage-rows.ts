// Reading the usage log for reports (`gw usage`), streaming: the months that overlap a time range
// are read chunk by chunk and handed over row by row, so a month of a million rows never sits in
// memory. Rows are judged by the rules the gateway itself uses when it opens the log
// (usage-log.ts): a line that is not JSON is corruption, a row with invalid credits or agent is
// skipped with a warning, and an unterminated last line (a write that was never acknowledged) is
// ignored (docs/decisions.md §15).
import { createReadStream, existsSync, statSync } from "node:fs";
import { StoreError } from "./store-error.js";
import { usageLogFile } from "./usage-files.js";
import { rowProblem, UsageLog, type UsageRow } from "./usage-log.js";

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
}

const NEWLINE = 0x0a;

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
  const start = Date.UTC(Number(period.slice(0, 4)), Number(period.slice(5, 7)) - 1, 1);
  const end = Date.UTC(Number(period.slice(0, 4)), Number(period.slice(5, 7)), 1);
  if (end <= range.since || start >= range.until) return "none";
  return start >= range.since && end <= range.until ? "whole" : "part";
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
    for await (const lines of sliceLines(slice)) {
      const batch: UsageRow[] = [];
      for (const { text, number } of lines) {
        let judged: UsageRow | string | null;
        try {
          judged = judgeRow(text, slice.whole, range);
        } catch {
          throw new StoreError(`usage log ${slice.file} is corrupt at line ${number}; refusing to start — restore it from a backup`);
        }
        // An invalid row is reported when it may lie in the range: its time can be as wrong as the rest.
        if (typeof judged === "string") onSkipped(`usage log ${slice.file} line ${number}: ${judged}; row skipped, not counted in any balance`);
        else if (judged) batch.push(judged);
      }
      if (batch.length > 0) yield batch;
    }
  }
}

/** A row's time in milliseconds, NaN when it has none that parses. */
function timeOf(row: unknown): number {
  const time = typeof row === "object" && row !== null ? (row as { time?: unknown }).time : undefined;
  return typeof time === "string" ? Date.parse(time) : Number.NaN;
}

function inRange(time: number, range: UsageRange): boolean {
  return time >= range.since && time < range.until;
}

interface Line {
  text: string;
  /** 1-based, blank lines included, as the gateway's warnings count them. */
  number: number;
}

/**
 * The complete, non-blank lines of the slice, a chunk's worth at a time. Lines are cut at the
 * newline byte, which never occurs inside a multi-byte UTF-8 character, so a chunk boundary
 * cannot split a character of a line that is decoded.
 */
async function* sliceLines(slice: UsageLogSlice): AsyncGenerator<Line[]> {
  if (slice.bytes === 0) return;
  let carry: Buffer | null = null;
  let number = 0;
  for await (const chunk of createReadStream(slice.file, { start: 0, end: slice.bytes - 1, highWaterMark: 1 << 20 })) {
    const buffer: Buffer = carry ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
    const lines: Line[] = [];
    let start = 0;
    let end = buffer.indexOf(NEWLINE, start);
    while (end !== -1) {
      number += 1;
      const text = buffer.toString("utf8", start, end);
      if (text.trim()) lines.push({ text, number });
      start = end + 1;
      end = buffer.indexOf(NEWLINE, start);
    }
    carry = start < buffer.length ? buffer.subarray(start) : null;
    yield lines;
  }
  // What is left has no newline: the last write was cut short and never acknowledged.
}
