// A month's credit totals as of a point in its usage log, so that a start reads only the rows
// written after that point instead of the whole month (a million rows is 300 MB and several
// seconds of JSON). It is a cache: data/usage/YYYY-MM.totals.json, derived from the log, left out
// of backups, and whenever it does not fit the log it is ignored and the log is read whole, which
// rebuilds it (docs/decisions.md §3).
//
// It fits when the log still holds the bytes it counted: the log is at least `bytes` long and the
// last 64 KiB before `bytes` hash to `tail`. The log is append-only, so a log cut short (a power
// cut, a restore of an older copy) or replaced fails that check; an edit inside the counted bytes
// is trusted as the sizes of earlier months are (docs/decisions.md §3). Deleting the file makes
// the next start read the whole month.
import { createHash } from "node:crypto";
import { closeSync, promises as fs, openSync, readFileSync, readSync, renameSync, statSync } from "node:fs";
import path from "node:path";
import { isObject } from "../json/json-values.js";
import { writeFileAtomic } from "./atomic-write.js";
import type { LinePosition } from "./usage-lines.js";
import { type DimensionSums, emptyDimensionSums, type GroupSums, type RowSums, SUMMED_DIMENSIONS } from "./usage-sums.js";
import { isCount } from "./usage-watermark.js";

/** 3: key groups keep their last row's time. An older checkpoint does not fit: the month is read whole once. */
const VERSION = 3;
const NEWLINE = 0x0a;
/** How much of the log before the checkpoint's end is hashed. */
const TAIL_BYTES = 64 * 1024;

/** A row of the log left out of every balance (invalid credits or agent), and why. */
export interface SkippedLine {
  line: number;
  problem: string;
}

/** An agent's valid rows, their credits and their overage. */
export type AgentSums = RowSums;

/** What the log holds up to `bytes` (the end of a complete line). */
export interface UsageCheckpoint extends LinePosition {
  rows: number;
  credits: number;
  /** Per agent as its rows name it (an id; an older row's name): the balances, and a whole month's report. */
  agents: Map<string, AgentSums>;
  /** Credits per key prefix (key budgets). */
  keys: Map<string, number>;
  /** Per day, model, key and endpoint as a report groups the rows (usage-sums.ts). */
  groups: DimensionSums;
  skipped: SkippedLine[];
}

export function checkpointFile(usageDirectory: string, period: string): string {
  return path.join(usageDirectory, `${period}.totals.json`);
}

/** The checkpoint of a period's log when there is one that fits the log as it is now; null otherwise. */
export function readCheckpoint(usageDirectory: string, period: string, logFile: string): UsageCheckpoint | null {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(checkpointFile(usageDirectory, period), "utf8"));
  } catch {
    return null; // none, or unreadable: the log is read whole
  }
  const parsed = parseCheckpoint(data, period);
  if (!parsed) return null;
  const { tail, ...checkpoint } = parsed;
  try {
    if (statSync(logFile).size < checkpoint.bytes || tailHash(logFile, checkpoint.bytes) !== tail) return null;
  } catch {
    return null;
  }
  return checkpoint;
}

/** Save a checkpoint now (at open and close). A cache: a failure to write it loses nothing. */
export function saveCheckpoint(usageDirectory: string, period: string, logFile: string, checkpoint: UsageCheckpoint): void {
  try {
    writeFileAtomic(checkpointFile(usageDirectory, period), serialize(period, logFile, checkpoint));
  } catch {
    // Read-only or full disk: the next start reads more of the log, nothing else.
  }
}

/** The same without blocking the server (the periodic save while it runs). */
export async function saveCheckpointInBackground(usageDirectory: string, period: string, logFile: string, checkpoint: UsageCheckpoint): Promise<void> {
  const file = checkpointFile(usageDirectory, period);
  const temporary = path.join(usageDirectory, `.${path.basename(file)}.${process.pid}.background.tmp`);
  try {
    await fs.writeFile(temporary, serialize(period, logFile, checkpoint), { mode: 0o600 });
    // An older checkpoint renamed over a newer one (a close saved meanwhile) still fits the log: only more is read.
    renameSync(temporary, file);
  } catch {
    await fs.rm(temporary, { force: true }).catch(() => undefined);
  }
}

function serialize(period: string, logFile: string, checkpoint: UsageCheckpoint): string {
  return `${JSON.stringify({
    version: VERSION,
    period,
    bytes: checkpoint.bytes,
    lines: checkpoint.lines,
    rows: checkpoint.rows,
    credits: checkpoint.credits,
    tail: tailHash(logFile, checkpoint.bytes),
    agents: Object.fromEntries(checkpoint.agents),
    keys: Object.fromEntries(checkpoint.keys),
    groups: Object.fromEntries(SUMMED_DIMENSIONS.map((dimension) => [dimension, Object.fromEntries(checkpoint.groups[dimension])])),
    skipped: checkpoint.skipped,
  })}\n`;
}

function parseCheckpoint(data: unknown, period: string): (UsageCheckpoint & { tail: string }) | null {
  if (!isObject(data) || data.version !== VERSION || data.period !== period || typeof data.tail !== "string") return null;
  const { bytes, lines, rows, credits } = data;
  if (!isCount(bytes) || !isCount(lines) || !isCount(rows) || !isCount(credits)) return null;
  const agents = sumsOf(data.agents);
  const keys = countsOf(data.keys);
  const groups = groupsOf(data.groups);
  if (!agents || !keys || !groups || !Array.isArray(data.skipped)) return null;
  const skipped: SkippedLine[] = [];
  for (const entry of data.skipped as unknown[]) {
    if (!isObject(entry) || !isCount(entry.line) || typeof entry.problem !== "string") return null;
    skipped.push({ line: entry.line, problem: entry.problem });
  }
  return { bytes, lines, rows, credits, agents, keys, groups, skipped, tail: data.tail };
}

function sumsOf(value: unknown): Map<string, GroupSums> | null {
  if (!isObject(value)) return null;
  const sums = new Map<string, GroupSums>();
  for (const [name, sum] of Object.entries(value)) {
    if (!isObject(sum) || !isCount(sum.rows) || !isCount(sum.credits) || !isCount(sum.overage)) return null;
    if ((sum.agent !== undefined && typeof sum.agent !== "string") || (sum.last !== undefined && typeof sum.last !== "string")) return null;
    sums.set(name, {
      rows: sum.rows,
      credits: sum.credits,
      overage: sum.overage,
      ...(sum.agent === undefined ? {} : { agent: sum.agent }),
      ...(sum.last === undefined ? {} : { last: sum.last }),
    });
  }
  return sums;
}

function groupsOf(value: unknown): DimensionSums | null {
  if (!isObject(value)) return null;
  const groups = emptyDimensionSums();
  for (const dimension of SUMMED_DIMENSIONS) {
    const sums = sumsOf(value[dimension]);
    if (!sums) return null;
    groups[dimension] = sums;
  }
  return groups;
}

function countsOf(value: unknown): Map<string, number> | null {
  if (!isObject(value)) return null;
  const counts = new Map<string, number>();
  for (const [name, count] of Object.entries(value)) {
    if (!isCount(count)) return null;
    counts.set(name, count);
  }
  return counts;
}

/** SHA-256 of the log's last TAIL_BYTES before `end` (all of it when shorter), which must end a line. */
function tailHash(logFile: string, end: number): string {
  const start = Math.max(0, end - TAIL_BYTES);
  const buffer = Buffer.alloc(end - start);
  const fd = openSync(logFile, "r");
  try {
    let filled = 0;
    while (filled < buffer.length) {
      const read = readSync(fd, buffer, filled, buffer.length - filled, start + filled);
      if (read === 0) throw new Error(`${logFile} is shorter than ${end} bytes`);
      filled += read;
    }
  } finally {
    closeSync(fd);
  }
  if (end > 0 && buffer[buffer.length - 1] !== NEWLINE) throw new Error(`${logFile} has no line ending at byte ${end}`);
  return createHash("sha256").update(buffer).digest("hex");
}
