// The storage index and quotas of one `gw serve` (FileStateRecords, embedded): the records on disk
// (file-records.ts), the operations log (file-operations-log.ts), and an in-memory index built
// once at start: each agent's files in id order (ids are ULIDs, so this is creation order), bytes
// used, bytes granted to uploads in flight, and operations in flight. Lists, quota checks and
// link lookups read the index; nothing rescans the records per request. One process serves the
// home, so a check and its take run with no await between them.
import path from "node:path";
import { FileOperationsLog } from "./file-operations-log.js";
import { type FileRecord, FileRecordStore } from "./file-records.js";
import type { ByteGrant, FileCursor, FileRecovery, FileSpace, FileStateRecords, OperationTicket, ReceivingClaim, SaveOptions } from "./file-state.js";

export class AgentFiles {
  readonly files = new Map<string, FileRecord>();
  /** Ids of `files`, ascending. */
  private readonly ids: string[] = [];
  /** Presigned uploads still waiting for their bytes. */
  readonly pending = new Set<string>();
  /** Sum of sizeBytes over `files` (a pending upload's space is taken when it is signed). */
  usedBytes = 0;
  /** Upload id -> bytes granted to it; `reservedBytes` is their sum. */
  readonly grants = new Map<string, number>();
  reservedBytes = 0;
  /** Counted operations started and not yet finished. */
  operationsInFlight = 0;

  get count(): number {
    return this.ids.length;
  }

  add(record: FileRecord): void {
    const existing = this.files.get(record.id);
    if (existing) this.usedBytes -= existing.sizeBytes;
    // A new file's id is the newest (and a start adds them in id order): appended, not inserted.
    else if (this.ids.length === 0 || this.ids[this.ids.length - 1]! < record.id) this.ids.push(record.id);
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

  returnGrant(uploadId: string): void {
    this.reservedBytes -= this.grants.get(uploadId) ?? 0;
    this.grants.delete(uploadId);
  }

  /** Newest first; `page` counts from 1. */
  page(page: number, limit: number): FileRecord[] {
    const end = this.ids.length - (page - 1) * limit;
    if (end <= 0) return [];
    const start = Math.max(0, end - limit);
    const records: FileRecord[] = [];
    for (let index = end - 1; index >= start; index -= 1) {
      const record = this.files.get(this.ids[index] ?? "");
      if (record) records.push(record);
    }
    return records;
  }

  /** Up to `limit` from just past `after` in `order`, and whether more follow. */
  listFrom(cursor: FileCursor): { records: FileRecord[]; hasMore: boolean } {
    const ascending = cursor.order === "asc";
    let index = ascending ? 0 : this.ids.length - 1;
    if (cursor.after !== undefined) {
      // The first id not below `after`: upward, the cursor starts there unless it is `after` itself; downward, just before it.
      const at = this.insertionPoint(cursor.after);
      index = ascending ? (this.ids[at] === cursor.after ? at + 1 : at) : at - 1;
    }
    const step = ascending ? 1 : -1;
    const records: FileRecord[] = [];
    for (; index >= 0 && index < this.ids.length && records.length < cursor.limit; index += step) {
      const record = this.files.get(this.ids[index] ?? "");
      if (record) records.push(record);
    }
    return { records, hasMore: index >= 0 && index < this.ids.length };
  }

  private insertionPoint(id: string): number {
    let low = 0;
    let high = this.ids.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.ids[middle] ?? "") < id) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

export class LocalFileState implements FileStateRecords {
  /** A grant is a few additions in memory: each chunk takes exactly its bytes, as it always did. */
  readonly grantStepBytes = 0;
  private readonly agents = new Map<string, AgentFiles>();
  private readonly byId = new Map<string, FileRecord>();
  /** Presigned uploads streaming in now: the claim's token, and until when (ms). */
  private readonly receiving = new Map<string, { token: symbol; until: number }>();
  private startRecords: FileRecord[] | null;

  private constructor(
    private readonly records: FileRecordStore,
    private readonly operations: FileOperationsLog,
    found: FileRecord[],
  ) {
    this.startRecords = found;
  }

  /** `<directory>/records` and `<directory>/operations` (the home's `data/storage`). A record that does not parse refuses the start. */
  static async open(directory: string): Promise<LocalFileState> {
    const { store, records } = await FileRecordStore.open(path.join(directory, "records"));
    return new LocalFileState(store, FileOperationsLog.open(path.join(directory, "operations")), records);
  }

  get recovery(): FileRecovery | undefined {
    const records = this.startRecords;
    if (!records) return undefined;
    return {
      records,
      restore: (record) => this.index(record),
      done: () => {
        this.startRecords = null;
      },
    };
  }

  async page(agentId: string, page: number, limit: number): Promise<{ records: FileRecord[]; total: number }> {
    const agent = this.agent(agentId);
    return { records: agent.page(page, limit), total: agent.count };
  }

  async listFrom(agentId: string, cursor: FileCursor): Promise<{ records: FileRecord[]; hasMore: boolean }> {
    return this.agent(agentId).listFrom(cursor);
  }

  async find(id: string): Promise<FileRecord | undefined> {
    return this.byId.get(id);
  }

  async space(agentId: string): Promise<FileSpace> {
    const agent = this.agent(agentId);
    return { usedBytes: agent.usedBytes, reservedBytes: agent.reservedBytes };
  }

  async operationCount(agentId: string, period: string): Promise<number> {
    return this.operations.count(agentId, period);
  }

  async takeOperation(agentId: string, period: string, limit: number): Promise<OperationTicket | null> {
    const agent = this.agent(agentId);
    if (this.operations.count(agentId, period) + agent.operationsInFlight >= limit) return null;
    agent.operationsInFlight += 1;
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      agent.operationsInFlight -= 1;
      return true;
    };
    return {
      commit: async (row) => {
        if (settle()) this.operations.append(row);
      },
      release: async () => {
        settle();
      },
    };
  }

  async grantBytes(agentId: string, uploadId: string, minBytes: number, maxBytes: number, limitBytes: number): Promise<ByteGrant> {
    const agent = this.agent(agentId);
    const room = limitBytes - agent.usedBytes - agent.reservedBytes;
    const space = { usedBytes: agent.usedBytes, reservedBytes: agent.reservedBytes };
    if (room < minBytes) return { ok: false, grantedBytes: 0, ...space };
    const granted = Math.min(maxBytes, room);
    agent.grants.set(uploadId, (agent.grants.get(uploadId) ?? 0) + granted);
    agent.reservedBytes += granted;
    return { ok: true, grantedBytes: granted, ...space };
  }

  async returnBytes(agentId: string, uploadId: string): Promise<void> {
    this.agent(agentId).returnGrant(uploadId);
  }

  async save(record: FileRecord, options: SaveOptions = {}): Promise<boolean> {
    if (options.ifPresent && !this.byId.has(record.id)) return false;
    await this.records.save(record);
    // Deleted while the record was being written: the delete wins.
    if (options.ifPresent && !this.byId.has(record.id)) {
      await this.records.remove(record);
      return false;
    }
    if (options.grant !== undefined) this.agent(record.agentId).returnGrant(options.grant);
    if (record.state !== "uploading") this.index(record);
    return true;
  }

  async abandonedUploads(): Promise<FileRecord[]> {
    return [];
  }

  async remove(record: Pick<FileRecord, "agentId" | "id">): Promise<FileRecord | undefined> {
    // Gone from the index first, so that a parallel delete, list or link sees it gone at once.
    const removed = this.byId.get(record.id);
    if (removed) this.unindex(removed);
    try {
      await this.records.remove(record);
    } catch (error) {
      if (removed) this.index(removed);
      throw error;
    }
    return removed;
  }

  async claimReceiving(id: string, ttlMs: number): Promise<ReceivingClaim | null> {
    if ((this.receiving.get(id)?.until ?? 0) > Date.now()) return null;
    const token = Symbol(id);
    this.receiving.set(id, { token, until: Date.now() + ttlMs });
    return {
      release: async () => {
        if (this.receiving.get(id)?.token === token) this.receiving.delete(id);
      },
    };
  }

  async dropExpiredUploads(agentId: string, nowSeconds: number): Promise<FileRecord[]> {
    const agent = this.agent(agentId);
    if (agent.pending.size === 0) return [];
    const dropped: FileRecord[] = [];
    for (const id of [...agent.pending]) {
      const record = agent.files.get(id);
      if (!record || (record.uploadExpires ?? 0) >= nowSeconds || (this.receiving.get(id)?.until ?? 0) > Date.now()) continue;
      this.unindex(record);
      dropped.push(record);
    }
    return dropped;
  }

  async totals(): Promise<{ files: number; bytes: number }> {
    let files = 0;
    let bytes = 0;
    for (const agent of this.agents.values()) {
      files += agent.count;
      bytes += agent.usedBytes;
    }
    return { files, bytes };
  }

  async close(): Promise<void> {
    this.operations.close();
  }

  private agent(agentId: string): AgentFiles {
    let files = this.agents.get(agentId);
    if (!files) {
      files = new AgentFiles();
      this.agents.set(agentId, files);
    }
    return files;
  }

  private index(record: FileRecord): void {
    this.agent(record.agentId).add(record);
    this.byId.set(record.id, record);
  }

  private unindex(record: FileRecord): void {
    this.agent(record.agentId).delete(record.id);
    this.byId.delete(record.id);
  }
}
