// The time range of a usage report (`gw usage`, GET /admin/v1/usage), from a period or since/until.
// All UTC, like the periods balances are kept in (docs/decisions.md §3). since is inclusive. until
// is exclusive as a time (rows strictly before it) but a date names a whole day that is included:
// `--since 2025-03-01 --until 2025-03-31` is all of March. A value not of its form, or an empty
// range, is an AdminInputError naming the field: the CLI's usage error (exit 2, docs/decisions.md
// §17), the API's 400.
import type { UsageRange } from "../store/usage-rows.js";
import { AdminInputError } from "./admin-requests.js";

export interface ReportRange extends UsageRange {
  /** YYYY-MM when the range is exactly one calendar month, the span a balance is kept for. */
  period?: string;
}

export interface RangeFlags {
  period?: string;
  since?: string;
  until?: string;
}

export const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?$/i;

/** How a field is named in messages: `--period` on the command line, `period` in a query. */
export type FieldLabel = (field: "period" | "since" | "until") => string;

const asFlag: FieldLabel = (field) => `--${field}`;

export function assertPeriod(period: string, label: FieldLabel = asFlag): void {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(period)) throw new AdminInputError("period", `${label("period")} "${period}": expected YYYY-MM`);
}

/**
 * The range the flags name. None: the current month. --since alone runs through today; --until
 * alone starts at the beginning of its month.
 */
export function reportRange(flags: RangeFlags, now: Date, label: FieldLabel = asFlag): ReportRange {
  if (flags.period !== undefined) {
    assertPeriod(flags.period, label);
    return monthRange(Number(flags.period.slice(0, 4)), Number(flags.period.slice(5, 7)) - 1);
  }
  if (flags.since === undefined && flags.until === undefined) return monthRange(now.getUTCFullYear(), now.getUTCMonth());
  const until = flags.until === undefined ? startOfDay(now.getTime()) + DAY_MS : parseInstant(label, "until", flags.until, "end");
  const since = flags.since === undefined ? startOfMonth(until - 1) : parseInstant(label, "since", flags.since, "start");
  if (since >= until) {
    throw new AdminInputError(
      "until",
      `${label("since")} ${iso(since)} is not before ${label("until")} ${iso(until)}: the range is empty (a date given to ${label("until")} includes that day)`,
    );
  }
  const month = monthRange(new Date(since).getUTCFullYear(), new Date(since).getUTCMonth());
  return month.since === since && month.until === until ? month : { since, until };
}

/** The range as people read it: "2025-03" for a month, else its two ends. */
export function describeRange(range: ReportRange): string {
  if (range.period) return `period ${range.period}`;
  return `since ${iso(range.since)} until ${iso(range.until)} (UTC; until exclusive)`;
}

export function iso(time: number): string {
  return new Date(time).toISOString();
}

/** YYYY-MM-DD of a day's start; the days of a report are keyed by it. */
export function dayLabel(dayStart: number): string {
  return iso(dayStart).slice(0, 10);
}

export function startOfDay(time: number): number {
  return Math.floor(time / DAY_MS) * DAY_MS;
}

function startOfMonth(time: number): number {
  const date = new Date(time);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

function monthRange(year: number, month: number): ReportRange {
  const since = Date.UTC(year, month, 1);
  return { since, until: Date.UTC(year, month + 1, 1), period: iso(since).slice(0, 7) };
}

/** A date (the day's start, or with `end` the next day's start) or an ISO 8601 time (UTC when it names no zone). */
function parseInstant(label: FieldLabel, field: "since" | "until", text: string, side: "start" | "end"): number {
  const flag = label(field);
  if (DATE.test(text)) {
    const start = calendarDay(text);
    if (start === null) throw new AdminInputError(field, `${flag} "${text}" is not a calendar date`);
    return side === "end" ? start + DAY_MS : start;
  }
  if (TIME.test(text) && calendarDay(text.slice(0, 10)) !== null) {
    const time = Date.parse(/[zZ]$|[+-]\d{2}:\d{2}$/.test(text) ? text : `${text}Z`);
    if (Number.isFinite(time)) return time;
  }
  throw new AdminInputError(
    field,
    `${flag} "${text}": expected a date (YYYY-MM-DD) or an ISO 8601 time (YYYY-MM-DDTHH:MM[:SS][Z|±HH:MM], UTC when no zone is given)`,
  );
}

/** The start of a YYYY-MM-DD day, or null for a day the calendar does not have (Date.parse rolls 02-30 over). */
function calendarDay(text: string): number | null {
  const match = DATE.exec(text);
  if (!match) return null;
  const start = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return dayLabel(start) === text ? start : null;
}
