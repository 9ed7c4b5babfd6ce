// Stored Responses API responses in Redis, for several gw instances that must continue each
// other's conversations (issue 23's first state port; the embedded FileResponseStore stays the
// default and the `state` setting that chooses this one comes with the other ports). One string
// key per response holding the same JSON document the file store writes, and one sorted set of
// ids by creation time, so retention is one range read however many responses there are.
// save and delete change both in one MULTI; prune counts what its own DELs removed, so two
// instances pruning at once remove and count each response once.
import type { ChainableCommander, Redis } from "ioredis";
import { isResponseId, isStoredResponse, type ResponseStore, type StoredResponse } from "./response-records.js";

/** How many ids one prune step removes: a long backlog is deleted in steps, not one huge command. */
const PRUNE_BATCH = 500;

export class RedisResponseStore implements ResponseStore {
  private readonly byCreation: string;

  constructor(
    private readonly redis: Redis,
    /** Prepended to every key, so several deployments (or tests) can share one Redis. */
    private readonly prefix = "gw:",
  ) {
    this.byCreation = `${prefix}responses:by-creation`;
  }

  async save(record: StoredResponse): Promise<void> {
    await replies(this.redis.multi().set(this.keyOf(record.id), JSON.stringify(record)).zadd(this.byCreation, record.createdAt, record.id));
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    if (!isResponseId(id)) return undefined;
    const text = await this.redis.get(this.keyOf(id));
    if (text === null) return undefined;
    const record: unknown = JSON.parse(text);
    return isStoredResponse(record) && record.id === id ? record : undefined;
  }

  async delete(id: string): Promise<boolean> {
    if (!isResponseId(id)) return false;
    const [deleted] = await replies(this.redis.multi().del(this.keyOf(id)).zrem(this.byCreation, id));
    return deleted === 1;
  }

  async prune(before: number): Promise<number> {
    let removed = 0;
    for (;;) {
      // Strictly before `before`, as the file store compares.
      const ids = await this.redis.zrangebyscore(this.byCreation, "-inf", `(${before}`, "LIMIT", 0, PRUNE_BATCH);
      if (ids.length === 0) return removed;
      const [deleted] = await replies(
        this.redis
          .multi()
          .del(...ids.map((id) => this.keyOf(id)))
          .zrem(this.byCreation, ...ids),
      );
      removed += typeof deleted === "number" ? deleted : 0;
    }
  }

  private keyOf(id: string): string {
    return `${this.prefix}response:${id}`;
  }
}

/** A MULTI's replies, in order; the first command that failed fails the whole (ioredis answers errors per command). */
async function replies(transaction: ChainableCommander): Promise<unknown[]> {
  const results = await transaction.exec();
  if (!results) throw new Error("the Redis transaction was discarded");
  return results.map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
}
