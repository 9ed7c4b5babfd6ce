// The last requests this instance answered, for the console's "recent requests" page and the
// overview's request figures (docs/decisions.md §27): the access records (access-log.ts) as
// written — status, method, path, model, provider, attempts, duration, credits, cache, agent, key
// prefix; never a body — in a fixed ring. Adding one is a slot write (and its time's); the console's own
// pages and assets are left out, so looking at the console does not push the traffic it shows out.
import type { AccessRecord } from "../server-logger.js";

/** How many requests the ring holds. */
export const RECENT_REQUESTS = 500;

const CONSOLE_PATH = "/console";

export interface RequestFigures {
  /** Requests in the ring. */
  requests: number;
  /** Answered 5xx (the gateway or its upstreams failed). */
  serverErrors: number;
  /** Answered 4xx (refused: a bad key, no credits, a bad request, a rate limit). */
  clientErrors: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface RecentRequest extends AccessRecord {
  /** When the response ended (epoch milliseconds). */
  endedAt: number;
}

export class RecentRequests {
  private readonly ring: Array<AccessRecord | undefined>;
  private readonly endedAt: Float64Array;
  private next = 0;

  constructor(readonly capacity = RECENT_REQUESTS) {
    this.ring = new Array<AccessRecord | undefined>(capacity);
    this.endedAt = new Float64Array(capacity);
  }

  add(record: AccessRecord): void {
    if (record.path.startsWith(CONSOLE_PATH)) return;
    this.ring[this.next] = record;
    this.endedAt[this.next] = Date.now();
    this.next = this.next + 1 === this.capacity ? 0 : this.next + 1;
  }

  /** The requests held, newest first. */
  list(): RecentRequest[] {
    const records: RecentRequest[] = [];
    for (let step = 1; step <= this.capacity; step++) {
      const slot = (this.next - step + this.capacity) % this.capacity;
      const record = this.ring[slot];
      if (record === undefined) break;
      records.push({ ...record, endedAt: this.endedAt[slot]! });
    }
    return records;
  }

  figures(): RequestFigures {
    const records = this.list();
    const durations = records.map((record) => record.durationMs).sort((a, b) => a - b);
    return {
      requests: records.length,
      serverErrors: records.filter((record) => record.status >= 500).length,
      clientErrors: records.filter((record) => record.status >= 400 && record.status < 500).length,
      p50Ms: percentile(durations, 0.5),
      p99Ms: percentile(durations, 0.99),
    };
  }
}

/** Nearest-rank percentile of sorted durations, in milliseconds to one decimal. */
function percentile(sorted: number[], share: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(1, Math.ceil(share * sorted.length)) - 1]!;
}
