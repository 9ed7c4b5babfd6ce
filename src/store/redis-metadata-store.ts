// Agents and keys in Redis, for several gw instances that must agree on them (issue 23): a key
// created or revoked through any instance reaches all of them. The whole document (the same JSON
// the file store keeps) is one string key beside a version counter. A change is an optimistic
// transaction on a fresh read (WATCH, read, MULTI SET + INCR + PUBLISH, EXEC; again when another
// writer got in first), so instances never lose each other's writes; mutations issued in one tick
// share one transaction, as the file store shares one locked write. The others hear of it on the
// changes channel; reloadIfChanged compares the version (one GET) for a message that never came.
import type { Redis } from "ioredis";
import type { MetadataRecords } from "./metadata-store.js";
import { emptyMetadata, type MetadataData } from "./records.js";
import { StoreError } from "./store-error.js";

type Mutation = { apply: (data: MetadataData) => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void };
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** How often one batch is re-applied after other writers changed the document under it. */
const MAX_ATTEMPTS = 100;

export interface RedisMetadataOptions {
  /** Prepended to both keys and the channel, so several deployments (or tests) can share one Redis. */
  prefix?: string;
  /** Create an empty document when there is none (gw init); otherwise a missing one refuses. */
  create?: boolean;
}

export class RedisMetadataStore implements MetadataRecords {
  private document: MetadataData = emptyMetadata();
  /** The version `document` was read or written at (-1: not read yet). */
  private version = -1;
  private pending: Mutation[] = [];
  private flushing: Promise<void> | null = null;
  /** Reads and transactions take turns, so a slow read never replaces what a later write adopted. */
  private turn: Promise<unknown> = Promise.resolve();
  private reloadQueued = false;
  private watching = false;
  private closed = false;
  private transactions: Redis | null = null;
  private transactionsReady: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<() => void>();
  private readonly documentKey: string;
  private readonly versionKey: string;
  private readonly channel: string;

  private constructor(
    private readonly redis: Redis,
    /** A connection for SUBSCRIBE only (Redis allows nothing else on it), used once watch() is called. */
    private readonly subscriber: Redis,
    prefix: string,
  ) {
    this.documentKey = `${prefix}meta`;
    this.versionKey = `${prefix}meta:v`;
    this.channel = `${prefix}changes`;
  }

  /** Open the stored document. A missing or corrupt one is an error unless `create` is set and none is there. */
  static async open(redis: Redis, subscriber: Redis, options: RedisMetadataOptions = {}): Promise<RedisMetadataStore> {
    const store = new RedisMetadataStore(redis, subscriber, options.prefix ?? "gw:");
    if (await store.readLatest()) return store;
    if (!options.create) throw store.missing();
    // NX: instances starting together agree on one document, and an existing one is never replaced.
    await redis.set(store.documentKey, JSON.stringify(emptyMetadata()), "NX");
    if (!(await store.readLatest())) throw store.missing();
    return store;
  }

  /** Read the stored document once, creating nothing and following nothing (`gw doctor`): null when there is none yet. */
  static async peek(redis: Redis, prefix = "gw:"): Promise<MetadataData | null> {
    const store = new RedisMetadataStore(redis, redis, prefix);
    return (await store.readLatest()) ? store.data : null;
  }

  get data(): MetadataData {
    return this.document;
  }

  /** Apply a change to a fresh read in one optimistic transaction; resolves with `apply`'s result. */
  mutate<T>(apply: (data: MetadataData) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ apply, resolve: resolve as (value: unknown) => void, reject });
      this.flushing ??= Promise.resolve().then(() => this.flush());
    });
  }

  /** Re-read when another instance changed the document. Returns true when data changed. */
  async reloadIfChanged(): Promise<boolean> {
    const version = await this.redis.get(this.versionKey);
    if (version === null || Number(version) === this.version) return false;
    return this.inTurn(() => this.readLatest());
  }

  /** Follow other instances' changes as they announce them. */
  watch(): void {
    if (this.watching) return;
    this.watching = true;
    this.subscriber.on("message", this.onMessage);
    // After a reconnect, whatever was announced while it was down is read once.
    this.subscriber.on("ready", this.onReady);
    // Changes made before the subscription took hold are caught by the read that follows it.
    this.subscriber.subscribe(this.channel).then(this.onReady, () => undefined);
  }

  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  /** Stop following changes and release this store's transaction connection (the caller owns the two it gave). */
  close(): void {
    this.closed = true;
    if (this.watching) {
      this.watching = false;
      this.subscriber.off("message", this.onMessage);
      this.subscriber.off("ready", this.onReady);
      this.subscriber.unsubscribe(this.channel).catch(() => undefined);
    }
    const transactions = this.transactions;
    this.transactions = null;
    transactions?.quit().catch(() => transactions.disconnect());
  }

  private readonly onMessage = (channel: string, message: string): void => {
    // The payload is the new version: our own announcements need no read.
    if (channel === this.channel && message !== String(this.version)) this.reloadSoon();
  };

  private readonly onReady = (): void => {
    this.reloadSoon();
  };

  /** A reload in the background; a burst of announcements costs one read. Failures wait for reloadIfChanged. */
  private reloadSoon(): void {
    if (this.reloadQueued) return;
    this.reloadQueued = true;
    this.inTurn(() => {
      this.reloadQueued = false;
      return this.readLatest();
    }).catch(() => undefined);
  }

  /** Read the document and adopt it when its version differs; false when it is absent or unchanged. */
  private async readLatest(): Promise<boolean> {
    const [text, version] = await this.redis.mget(this.documentKey, this.versionKey);
    if (text === null || text === undefined) return false;
    const current = Number(version ?? 0);
    if (current === this.version) return false;
    this.document = this.parse(text);
    this.version = current;
    this.notify();
    return true;
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      const outcomes = await this.inTurn(() => this.commit(batch));
      batch.forEach((mutation, index) => {
        const outcome = outcomes[index];
        if (outcome?.ok) mutation.resolve(outcome.value);
        else mutation.reject(outcome?.error);
      });
      if (outcomes.some((outcome) => outcome.ok)) this.notify();
    } catch (error) {
      for (const mutation of batch) mutation.reject(error);
    } finally {
      this.flushing = this.pending.length > 0 ? Promise.resolve().then(() => this.flush()) : null;
    }
  }

  /** WATCH, read, apply, write; from the top again when EXEC reports that someone else wrote first. */
  private async commit(batch: Mutation[]): Promise<Outcome[]> {
    const transactions = await this.transactionConnection();
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await transactions.watch(this.documentKey, this.versionKey);
      let next: number;
      let document: MetadataData;
      let outcomes: Outcome[];
      try {
        const [text, version] = await transactions.mget(this.documentKey, this.versionKey);
        // Never start afresh over a document that vanished: that would drop every key and balance.
        if (text === null || text === undefined) throw this.missing();
        document = this.parse(text);
        next = Number(version ?? 0) + 1;
        outcomes = batch.map((mutation): Outcome => {
          try {
            return { ok: true, value: mutation.apply(document) };
          } catch (error) {
            return { ok: false, error };
          }
        });
      } catch (error) {
        await transactions.unwatch().catch(() => undefined);
        throw error;
      }
      if (!outcomes.some((outcome) => outcome.ok)) {
        await transactions.unwatch();
        return outcomes;
      }
      const replies = await transactions
        .multi()
        .set(this.documentKey, JSON.stringify(document))
        .incr(this.versionKey)
        .publish(this.channel, String(next))
        .exec();
      if (replies === null) continue;
      for (const [error] of replies) if (error) throw error;
      this.document = document;
      this.version = next;
      return outcomes;
    }
    throw new Error(`the metadata document ${this.documentKey} changed under ${MAX_ATTEMPTS} attempts to write it; try again`);
  }

  /**
   * WATCH belongs to a connection, and any EXEC on it releases it: a connection of this store's
   * own, so other users of `redis` (the responses store's MULTIs) cannot let a conflicting write
   * through. Opened on the first change, so read-only commands never open it.
   */
  private async transactionConnection(): Promise<Redis> {
    if (this.closed) throw new Error("the metadata store is closed");
    if (!this.transactions) {
      const connection = this.redis.duplicate();
      this.transactions = connection;
      // A connection set up to connect on demand (lazyConnect, no offline queue: gw's) connects here, once.
      this.transactionsReady = connection.status === "wait" ? connection.connect() : Promise.resolve();
    }
    await this.transactionsReady;
    return this.transactions;
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work);
    this.turn = run.catch(() => undefined);
    return run;
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  private parse(text: string): MetadataData {
    let data: Partial<MetadataData> | null;
    try {
      data = JSON.parse(text) as Partial<MetadataData> | null;
    } catch (error) {
      throw new StoreError(
        `metadata document ${this.documentKey} in Redis is corrupt (${(error as Error).message}); refusing to start — restore it from a backup`,
        {
          commandMessage: this.corruptForCommand(`is not valid JSON (${(error as Error).message})`),
        },
      );
    }
    if (!data || !Array.isArray(data.agents) || !Array.isArray(data.keys)) {
      throw new StoreError(`metadata document ${this.documentKey} in Redis is not a gw metadata document; refusing to start — restore it from a backup`, {
        commandMessage: this.corruptForCommand("is not a gw metadata document (no agents and keys lists)"),
      });
    }
    return data as MetadataData;
  }

  private missing(): StoreError {
    return new StoreError(
      `metadata document ${this.documentKey} in Redis is missing; refusing to start with empty balances and keys (restore it, or run \`gw init\` to start afresh)`,
      {
        commandMessage: `the metadata document ${this.documentKey} in Redis (agents and keys) is missing: restore it from a backup, or run \`gw init\` to start afresh with no agents or keys`,
      },
    );
  }

  /** A damaged document as a command reports it: gw never rewrites it, so recovery is the user's copy. */
  private corruptForCommand(problem: string): string {
    return `the metadata document ${this.documentKey} in Redis ${problem}, so gw cannot read its agents and keys; nothing was changed. Restore it from a backup (gw keeps none itself), or, to start over with no agents or keys, delete it and run \`gw init\`.`;
  }
}
