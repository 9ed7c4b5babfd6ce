// Sums of usage rows as a report groups them (`gw usage`, the console): per agent, and per day,
// model, key and endpoint, each with its rows, credits and overage. In the store because the
// usage log keeps a month's sums as it counts rows (usage-log.ts) and checkpoints them
// (usage-checkpoint.ts), so a report of a whole month reads them instead of the month. The log
// vouches only for agent and credits: any other field that is not text groups as "(none)".
import type { UsageRow } from "./usage-log.js";
import { isCount } from "./usage-watermark.js";

/** The group of a row whose field is missing or not text (older rows; the log only vouches for agent and credits). */
export const NO_VALUE = "(none)";

/** A group's valid rows, their credits and their overage (credits not billed: docs/decisions.md §3). */
export interface RowSums {
  rows: number;
  credits: number;
  overage: number;
}

/** The dimensions summed as rows are counted; tags are not (any request may name new ones). */
export const SUMMED_DIMENSIONS = ["day", "model", "key", "endpoint"] as const;
export type SummedDimension = (typeof SUMMED_DIMENSIONS)[number];

export interface GroupSums extends RowSums {
  /** Key groups: the agent, as the row names it, of the group's first row (for a key the metadata no longer has). */
  agent?: string;
  /** Key groups: the latest time (as written) among the group's rows, for a key's last use. */
  last?: string;
}

export type DimensionSums = Record<SummedDimension, Map<string, GroupSums>>;

export function emptyDimensionSums(): DimensionSums {
  return { day: new Map(), model: new Map(), key: new Map(), endpoint: new Map() };
}

/** Count a valid row in its group of every summed dimension. */
export function addToGroups(groups: DimensionSums, row: UsageRow, overage: number): void {
  addTo(groups.day, dayOf(row.time), row, overage);
  addTo(groups.model, textValue(row.model), row, overage);
  const key = groups.key.get(textValue(row.keyPrefix));
  if (key) {
    add(key, row, overage);
    if (typeof row.time === "string" && (key.last === undefined || row.time > key.last)) key.last = row.time;
  } else {
    groups.key.set(textValue(row.keyPrefix), {
      rows: 1,
      credits: row.credits,
      overage,
      agent: row.agent,
      ...(typeof row.time === "string" ? { last: row.time } : {}),
    });
  }
  addTo(groups.endpoint, textValue(row.endpoint), row, overage);
}

function addTo(groups: Map<string, GroupSums>, value: string, row: UsageRow, overage: number): void {
  const sums = groups.get(value);
  if (sums) add(sums, row, overage);
  else groups.set(value, { rows: 1, credits: row.credits, overage });
}

function add(sums: RowSums, row: UsageRow, overage: number): void {
  sums.rows += 1;
  sums.credits += row.credits;
  sums.overage += overage;
}

/** A row's group in a dimension (docs/decisions.md §15). */
export function groupValue(dimension: SummedDimension, row: UsageRow): string {
  switch (dimension) {
    case "day":
      return dayOf(row.time);
    case "model":
      return textValue(row.model);
    case "key":
      return textValue(row.keyPrefix);
    default:
      return textValue(row.endpoint);
  }
}

/** A row's overage: 0 for rows without one (the log vouches only for agent and credits, so anything else counts as none). */
export function overageOf(row: UsageRow): number {
  return isCount(row.overage) ? row.overage : 0;
}

const DAY_MS = 86_400_000;

/** The day of the last row: the next one is almost always of the same day (no new string for it). */
let lastDay = "-";

/** The UTC day (YYYY-MM-DD) of a row's time; the gateway writes ISO times in UTC, read by slicing. */
export function dayOf(time: unknown): string {
  if (typeof time !== "string") return NO_VALUE;
  if (time.length >= 20 && time.endsWith("Z") && time[10] === "T") {
    if (!time.startsWith(lastDay)) lastDay = time.slice(0, 10);
    return lastDay;
  }
  const parsed = Date.parse(time);
  return Number.isFinite(parsed) ? new Date(Math.floor(parsed / DAY_MS) * DAY_MS).toISOString().slice(0, 10) : NO_VALUE;
}

export function textValue(value: unknown): string {
  return typeof value === "string" && value !== "" ? value : NO_VALUE;
}
