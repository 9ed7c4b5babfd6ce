// The usage rows of a Redis state, for reports: one stream per month, `<prefix>usage:<YYYY-MM>`,
// each entry's field `r` a row's JSON, as the credit store's settle script writes them
// (redis-credit-store.ts). Read with XRANGE a page at a time from an exclusive start id, so no
// reply carries a whole month, and each stream only up to the entry that was last when the
// reading began, so a report that reads twice sees the same rows while instances append.
import type { Redis } from "ioredis";
import { StoreError } from "./store-error.js";
import type { UsageHistory, UsageReading } from "./usage-history.js";
import type { UsageRow } from "./usage-log.js";
import { judgeRow, periodOverlap, type UsageRange } from "./usage-rows.js";

export interface RedisUsageHistoryOptions {
  /** Entries per XRANGE reply. */
  pageSize?: number;
}

/** A range spanning more months than this lists the streams with SCAN rather than asking for each month. */
const MONTHS_ASKED_AT_MOST = 1200;
const PERIOD = /^\d{4}-(0[1-9]|1[0-2])$/;

interface StreamSlice {
  key: string;
  /** The id of its last entry when the reading began. */
  lastId: string;
  whole: boolean;
}

export class RedisUsageHistory implements UsageHistory {
  private readonly pageSize: number;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    options: RedisUsageHistoryOptions = {},
  ) {
    this.pageSize = options.pageSize ?? 1000;
  }

  /** Every month with a stream: SCAN, which walks the whole keyspace (the row ids too), a page at a time. */
  async periods(): Promise<string[]> {
    const pattern = `${escapeGlob(this.prefix)}usage:*`;
    const periods = new Set<string>();
    let cursor = "0";
    do {
      const [next, keys] = await this.redis.scan(cursor, "MATCH", pattern, "COUNT", 1000, "TYPE", "stream");
      for (const key of keys) {
        const period = key.slice(this.streamKey("").length);
        if (PERIOD.test(period)) periods.add(period);
      }
      cursor = next;
    } while (cursor !== "0");
    return [...periods].sort();
  }

  async reading(range: UsageRange): Promise<UsageReading> {
    const periods = (monthsOf(range) ?? (await this.periods())).filter((period) => periodOverlap(period, range) !== "none");
    // One round trip: the commands of one turn go together (the connection pipelines them).
    const lasts = await Promise.all(periods.map((period) => this.redis.xrevrange(this.streamKey(period), "+", "-", "COUNT", 1)));
    const slices: StreamSlice[] = [];
    periods.forEach((period, index) => {
      const last = lasts[index]?.[0];
      if (last) slices.push({ key: this.streamKey(period), lastId: last[0], whole: periodOverlap(period, range) === "whole" });
    });
    return { rows: (onSkipped) => this.rows(slices, range, onSkipped) };
  }

  private async *rows(slices: StreamSlice[], range: UsageRange, onSkipped: (warning: string) => void = () => undefined): AsyncGenerator<UsageRow[]> {
    for (const slice of slices) {
      let start = "-";
      for (;;) {
        const entries = await this.redis.xrange(slice.key, start, slice.lastId, "COUNT", this.pageSize);
        const batch: UsageRow[] = [];
        for (const [id, fields] of entries) {
          let judged: UsageRow | string | null;
          try {
            judged = judgeRow(rowField(fields) ?? "", slice.whole, range);
          } catch {
            throw new StoreError(`usage stream ${slice.key} in Redis is corrupt at entry ${id} (its field r is not a JSON row)`);
          }
          if (typeof judged === "string") onSkipped(`usage stream ${slice.key} entry ${id}: ${judged}; row skipped, not counted in any balance`);
          else if (judged) batch.push(judged);
        }
        if (batch.length > 0) yield batch;
        const last = entries.at(-1);
        if (!last || entries.length < this.pageSize || last[0] === slice.lastId) break;
        start = `(${last[0]}`;
      }
    }
  }

  private streamKey(period: string): string {
    return `${this.prefix}usage:${period}`;
  }
}

/** The value of field `r` in an entry's [name, value, ...] list. */
function rowField(fields: string[]): string | undefined {
  for (let index = 0; index + 1 < fields.length; index += 2) if (fields[index] === "r") return fields[index + 1];
  return undefined;
}

/** The months a bounded range touches, oldest first; undefined when it spans too many to ask for each. */
function monthsOf(range: UsageRange): string[] | undefined {
  if (!Number.isFinite(range.since) || !Number.isFinite(range.until) || range.until <= range.since) return undefined;
  const first = new Date(range.since);
  const last = new Date(range.until - 1);
  const count = (last.getUTCFullYear() - first.getUTCFullYear()) * 12 + last.getUTCMonth() - first.getUTCMonth() + 1;
  if (!(count > 0 && count <= MONTHS_ASKED_AT_MOST)) return undefined;
  const months: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const month = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + index, 1)).toISOString().slice(0, 7);
    if (PERIOD.test(month)) months.push(month);
  }
  return months;
}

/** A prefix as a SCAN pattern matching only itself. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}
