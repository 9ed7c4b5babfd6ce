// The admin audit log (docs/decisions.md §25): one entry per admin API call and console change —
// who (the admin token's name and prefix), what (method, path, the action and its target), when,
// from where, and how it ended. Never a body, a token or a key. The port has two implementations,
// chosen with the rest of the state: month files under the home's data directory, or one capped
// Redis stream every instance appends to.
import { appendFile, mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Redis } from "ioredis";

export interface AuditEntry {
  time: string;
  requestId: string;
  /** The admin token that made the call; absent when none was accepted (the reason is in `status`). */
  actor?: { id: string; name: string; prefix: string };
  method: string;
  path: string;
  status: number;
  /** The client's address as the server saw it. */
  remote: string;
  /** What a change did, in fixed words (`keys.create`, `keys.revoke` …); absent for reads. */
  action?: string;
  /** The id or name of what the change touched. */
  target?: string;
}

export interface AuditTrail {
  append(entry: AuditEntry): Promise<void>;
  /** The latest entries, newest first. */
  recent(limit: number): Promise<AuditEntry[]>;
}

const MONTH_FILE = /^(\d{4}-\d{2})\.jsonl$/;

/** Month files (`YYYY-MM.jsonl`), appended one line per entry: a line is written whole or not at all. */
export class LocalAuditTrail implements AuditTrail {
  constructor(private readonly directory: string) {}

  async append(entry: AuditEntry): Promise<void> {
    await mkdir(this.directory, { recursive: true });
    await appendFile(join(this.directory, `${entry.time.slice(0, 7)}.jsonl`), `${JSON.stringify(entry)}\n`);
  }

  async recent(limit: number): Promise<AuditEntry[]> {
    let months: string[];
    try {
      months = (await readdir(this.directory))
        .filter((name) => MONTH_FILE.test(name))
        .sort()
        .reverse();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const entries: AuditEntry[] = [];
    for (const month of months) {
      const lines = (await readFile(join(this.directory, month), "utf8")).split("\n");
      for (let index = lines.length - 1; index >= 0 && entries.length < limit; index--) {
        const entry = parsedEntry(lines[index] ?? "");
        if (entry) entries.push(entry);
      }
      if (entries.length >= limit) break;
    }
    return entries;
  }
}

/** The most entries the Redis stream keeps (about, as XADD's MAXLEN ~ trims whole nodes). */
const REDIS_ENTRIES_KEPT = 1_000_000;

export class RedisAuditTrail implements AuditTrail {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.key = `${prefix}audit`;
  }

  async append(entry: AuditEntry): Promise<void> {
    await this.redis.xadd(this.key, "MAXLEN", "~", REDIS_ENTRIES_KEPT, "*", "entry", JSON.stringify(entry));
  }

  async recent(limit: number): Promise<AuditEntry[]> {
    const items = await this.redis.xrevrange(this.key, "+", "-", "COUNT", limit);
    return items.flatMap(([, fields]) => {
      const entry = parsedEntry(fields[1] ?? "");
      return entry ? [entry] : [];
    });
  }
}

/** A stored line, or nothing for a blank or cut-short one (a crash mid-append leaves at most the last line unfinished). */
function parsedEntry(text: string): AuditEntry | undefined {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as AuditEntry;
  } catch {
    return undefined;
  }
}
