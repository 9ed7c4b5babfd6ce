// Storage operations (upload, presigned-upload, delete) per agent and period: an append-only
// JSONL file per period (calendar month, UTC), like the usage log. Counts for a period are read
// once, then kept in memory; each operation is one short synchronous append, so a count that
// was acknowledged survives a crash. A torn last line (a write cut short) is dropped on open.
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import path from "node:path";
import { StoreError } from "./store-error.js";
import { periodOf } from "./usage-log.js";

export type StorageOperation = "upload" | "presigned-upload" | "delete";

export interface OperationRow {
  time: string;
  agent: string;
  op: StorageOperation;
  file: string;
}

export class FileOperationsLog {
  private fd: number | null = null;
  private fdPeriod = "";
  /** period -> agent id -> operations counted */
  private readonly counts = new Map<string, Map<string, number>>();

  private constructor(readonly directory: string) {}

  static open(directory: string, now = new Date()): FileOperationsLog {
    mkdirSync(directory, { recursive: true });
    const log = new FileOperationsLog(directory);
    log.load(periodOf(now));
    return log;
  }

  count(agentId: string, period: string): number {
    return (this.counts.get(period) ?? this.load(period)).get(agentId) ?? 0;
  }

  /** Every agent's operations counted in a period (`gw migrate` copies them). */
  agentCounts(period: string): ReadonlyMap<string, number> {
    return this.counts.get(period) ?? this.load(period);
  }

  append(row: OperationRow): void {
    const period = row.time.slice(0, 7);
    const agents = this.counts.get(period) ?? this.load(period);
    if (this.fdPeriod !== period) {
      this.close();
      this.fd = openSync(this.fileOf(period), "a", 0o600);
      this.fdPeriod = period;
    }
    writeSync(this.fd!, `${JSON.stringify(row)}\n`);
    agents.set(row.agent, (agents.get(row.agent) ?? 0) + 1);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.fdPeriod = "";
  }

  private fileOf(period: string): string {
    return path.join(this.directory, `${period}.jsonl`);
  }

  private load(period: string): Map<string, number> {
    const agents = new Map<string, number>();
    const file = this.fileOf(period);
    if (existsSync(file)) {
      const text = readFileSync(file, "utf8");
      let offset = 0;
      let line = 0;
      for (;;) {
        const end = text.indexOf("\n", offset);
        if (end === -1) break;
        line += 1;
        const content = text.slice(offset, end);
        offset = end + 1;
        if (!content.trim()) continue;
        let row: Partial<OperationRow>;
        try {
          row = JSON.parse(content) as Partial<OperationRow>;
        } catch {
          throw new StoreError(`storage operations log ${file} is corrupt at line ${line}; refusing to start — restore it from a backup`);
        }
        if (typeof row.agent !== "string") throw new StoreError(`storage operations log ${file} has an invalid row at line ${line}; refusing to start`);
        agents.set(row.agent, (agents.get(row.agent) ?? 0) + 1);
      }
      const validLength = Buffer.byteLength(text.slice(0, offset));
      if (validLength < Buffer.byteLength(text)) {
        const fd = openSync(file, "r+");
        ftruncateSync(fd, validLength);
        closeSync(fd);
      }
    }
    this.counts.set(period, agents);
    return agents;
  }
}
