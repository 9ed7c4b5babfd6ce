// The in-memory view of the stored-file records, built once at start and kept current by the
// storage service: each agent's files in id order (ids are ULIDs, so this is creation order),
// bytes used, bytes reserved by uploads in flight, and operations in flight. Lists, quota checks
// and link lookups read it; nothing rescans the records per request.
import type { FileRecord } from "../../store/file-records.js";

export class AgentFiles {
  readonly files = new Map<string, FileRecord>();
  /** Ids of `files`, ascending. */
  private readonly ids: string[] = [];
  /** Presigned uploads still waiting for their bytes. */
  readonly pending = new Set<string>();
  /** Sum of sizeBytes over `files` (a pending upload's space is taken when it is signed). */
  usedBytes = 0;
  /** Bytes of multipart uploads in flight, taken chunk by chunk. */
  reservedBytes = 0;
  /** Counted operations started and not yet finished. */
  operationsInFlight = 0;

  get count(): number {
    return this.ids.length;
  }

  add(record: FileRecord): void {
    const existing = this.files.get(record.id);
    if (existing) this.usedBytes -= existing.sizeBytes;
    else this.ids.splice(this.insertionPoint(record.id), 0, record.id);
    this.files.set(record.id, record);
    this.usedBytes += record.sizeBytes;
    if (record.state === "pending") this.pending.add(record.id);
    else this.pending.delete(record.id);
  }

  delete(id: string): FileRecord | undefined {
    const record = this.files.get(id);
    if (!record) return undefined;
    this.files.delete(id);
    this.pending.delete(id);
    this.usedBytes -= record.sizeBytes;
    const index = this.insertionPoint(id);
    if (this.ids[index] === id) this.ids.splice(index, 1);
    return record;
  }

  /** Newest first; `page` counts from 1. */
  page(page: number, limit: number): FileRecord[] {
    const end = this.ids.length - (page - 1) * limit;
    if (end <= 0) return [];
    const start = Math.max(0, end - limit);
    return this.ids
      .slice(start, end)
      .reverse()
      .map((id) => this.files.get(id)!);
  }

  private insertionPoint(id: string): number {
    let low = 0;
    let high = this.ids.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.ids[middle]! < id) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

export class FileIndex {
  private readonly agents = new Map<string, AgentFiles>();
  private readonly byId = new Map<string, FileRecord>();

  agent(agentId: string): AgentFiles {
    let files = this.agents.get(agentId);
    if (!files) {
      files = new AgentFiles();
      this.agents.set(agentId, files);
    }
    return files;
  }

  /** Files and their bytes over every agent (the metrics; pending uploads count, as for a quota). */
  totals(): { files: number; bytes: number } {
    let files = 0;
    let bytes = 0;
    for (const agent of this.agents.values()) {
      files += agent.count;
      bytes += agent.usedBytes;
    }
    return { files, bytes };
  }

  /** Any agent's file by id: for signed links, which name a file but no agent. */
  find(id: string): FileRecord | undefined {
    return this.byId.get(id);
  }

  add(record: FileRecord): void {
    this.agent(record.agentId).add(record);
    this.byId.set(record.id, record);
  }

  delete(record: FileRecord): void {
    this.agent(record.agentId).delete(record.id);
    this.byId.delete(record.id);
  }
}
