// The config shared by every instance on one Redis (docs/decisions.md §6, §21): the raw JSON of
// config.json, `${ENV}` references as written (each instance interpolates them when it loads, as
// it does its file), without the `server` and `state` sections, which stay in each instance's own
// file. One string key beside a version counter, as the metadata store keeps agents and keys: a
// change is an optimistic transaction (WATCH, read, apply, validate, MULTI SET + INCR + PUBLISH,
// EXEC; again when another writer got in first); instances hear of it on the config channel, and
// a version read every 500 ms catches an announcement that never came. The first instance or `gw`
// command to find no document seeds it from its own file (only into an empty key), so an existing
// home carries over.
import type { Redis } from "ioredis";
import { type Bootstrap, type RawConfig, withLocalSections, withoutLocalSections } from "../config/bootstrap-sections.js";
import { ConfigError } from "../config/config-error.js";
import type { ConfigWatcherEvents } from "../config/config-watcher.js";
import { parseConfigText, parseRawConfig } from "../config/load-config.js";
import type { Config } from "../config/resolved-config.js";
import { openRedis } from "./redis-connection.js";

/** How often a watching instance compares the version, for a lost announcement. */
const VERSION_POLL_MS = 500;
/** How often one edit is re-applied after other writers changed the document under it. */
const MAX_ATTEMPTS = 100;

type Change<T> = (text: string | null) => { text: string; value: T } | null;

export class RedisConfigStore {
  /** Where the document lives, as errors and logs name it. */
  readonly label: string;
  private readonly documentKey: string;
  private readonly versionKey: string;
  private readonly channel: string;
  /** The version last adopted (or refused and reported): -1 before the first read. */
  private version = -1;
  private subscriber: Redis | null = null;
  private poll: NodeJS.Timeout | undefined;
  private events: ConfigWatcherEvents | null = null;
  /** Reads and edits take turns: a WATCH is this connection's, and a slow read must not undo a later one. */
  private turn: Promise<unknown> = Promise.resolve();
  private reloadQueued = false;
  private closed = false;

  private constructor(
    private readonly redis: Redis,
    private readonly bootstrap: Bootstrap,
    prefix: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.documentKey = `${prefix}config`;
    this.versionKey = `${prefix}config:v`;
    this.channel = `${prefix}config:changes`;
    this.label = `Redis key ${this.documentKey}`;
  }

  /** Connect to the Redis the bootstrap's `state` section names (a connection of this store's own). */
  static async connect(bootstrap: Bootstrap, env: NodeJS.ProcessEnv = process.env): Promise<RedisConfigStore> {
    const { url, prefix, commandTimeoutMs } = bootstrap.state;
    // The schema refuses a redis driver without one.
    if (url === undefined) throw new ConfigError("the redis driver needs a url", bootstrap.file, "state.url");
    return new RedisConfigStore(await openRedis({ url, commandTimeoutMs }), bootstrap, prefix, env);
  }

  /**
   * The shared document as it stands, read once on `redis` without seeding it (`gw doctor`), with
   * the bootstrap's local sections: null when Redis holds none yet. An invalid one throws
   * ConfigError naming the field.
   */
  static async peek(
    redis: Redis,
    bootstrap: Bootstrap,
    env: NodeJS.ProcessEnv = process.env,
  ): Promise<{ config: Config; raw: RawConfig; label: string } | null> {
    const store = new RedisConfigStore(redis, bootstrap, bootstrap.state.prefix, env);
    const text = await redis.get(store.documentKey);
    return typeof text === "string" ? { config: store.parse(text), raw: store.effectiveRaw(text), label: store.label } : null;
  }

  /** The config this instance runs: the shared document (seeded from the local file when there is none) with the local sections. */
  async load(): Promise<{ config: Config; raw: RawConfig; seeded: boolean }> {
    let seeded = false;
    for (let attempt = 1; attempt <= 2; attempt++) {
      const [text, version] = await this.inTurn(() => this.redis.mget(this.documentKey, this.versionKey));
      if (typeof text === "string") {
        const raw = this.effectiveRaw(text);
        const config = this.parse(text);
        this.version = Number(version ?? 0);
        return { config, raw, seeded };
      }
      seeded = (await this.inTurn(() => this.commit((current) => (current === null ? { text: this.seedText(), value: true } : null)))) !== null;
    }
    throw new ConfigError("the shared config vanished while it was being seeded; try again", this.label);
  }

  /**
   * Change the shared document in one optimistic transaction: `edit` gets the raw JSON (as
   * written, without the local sections); the result is validated with this instance's local
   * sections before it is written. An invalid result throws ConfigError naming the field, and
   * nothing is written.
   */
  async edit<T>(edit: (raw: RawConfig) => T): Promise<{ result: T; config: Config }> {
    const outcome = await this.inTurn(() =>
      this.commit((current) => {
        const raw = current === null ? withoutLocalSections(structuredClone(this.bootstrap.raw)) : parseRawConfig(current, this.label);
        const result = edit(raw);
        const text = `${JSON.stringify(withoutLocalSections(raw), null, 2)}\n`;
        return { text, value: { result, config: this.parse(text) } };
      }),
    );
    // commit returns null only when the change declines to write, which this one never does.
    if (outcome === null) throw new Error("the shared config edit was not written");
    return outcome;
  }

  /** Follow changes made through any instance or `gw` command: `onReload` with a valid one, `onError` (old config stays) otherwise. */
  watch(events: ConfigWatcherEvents): { close(): void } {
    this.events = events;
    if (!this.subscriber) {
      const subscriber = this.redis.duplicate();
      this.subscriber = subscriber;
      subscriber.on("error", () => undefined);
      subscriber.on("message", (channel: string, message: string) => {
        // The payload is the new version: what this instance has already needs no read.
        if (channel === this.channel && message !== String(this.version)) this.reloadSoon();
      });
      // Subscribed (again, after a reconnect): whatever was announced meanwhile is read once.
      subscriber.on("ready", () => this.reloadSoon());
      const connected = subscriber.status === "wait" ? subscriber.connect() : Promise.resolve();
      connected
        .then(() => subscriber.subscribe(this.channel))
        .then(
          () => this.reloadSoon(),
          () => undefined,
        );
      this.poll = setInterval(() => this.reloadIfChanged(), VERSION_POLL_MS).unref();
    }
    return { close: () => this.stopWatching() };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopWatching();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private stopWatching(): void {
    this.events = null;
    clearInterval(this.poll);
    this.poll = undefined;
    this.subscriber?.disconnect();
    this.subscriber = null;
  }

  /** One GET of the version; a changed one is read. Redis failing here is not logged: /ready's state check reports it, and the next poll tries again. */
  private reloadIfChanged(): void {
    this.redis.get(this.versionKey).then(
      (version) => {
        if (Number(version ?? 0) !== this.version) this.reloadSoon();
      },
      () => undefined,
    );
  }

  /** A reload in the background; a burst of announcements costs one read. */
  private reloadSoon(): void {
    if (this.reloadQueued || this.closed) return;
    this.reloadQueued = true;
    this.inTurn(async () => {
      this.reloadQueued = false;
      await this.reload();
    }).catch(() => undefined);
  }

  /** Read the document; a new version is adopted when it validates and reported when it does not (reported once per version). */
  private async reload(): Promise<void> {
    const [text, version] = await this.redis.mget(this.documentKey, this.versionKey);
    const current = Number(version ?? 0);
    const events = this.events;
    if (current === this.version || !events) return;
    this.version = current;
    if (typeof text !== "string") {
      events.onError(new ConfigError("the shared config is missing from Redis (the next `gw` config command or instance start seeds it again)", this.label));
      return;
    }
    let config: Config;
    try {
      config = this.parse(text);
    } catch (error) {
      events.onError(error instanceof ConfigError ? error : new ConfigError((error as Error).message, this.label));
      return;
    }
    events.onReload(config);
  }

  /** WATCH, read, change, write; from the top again when EXEC reports that someone else wrote first. Null when `change` declines. */
  private async commit<T>(change: Change<T>): Promise<T | null> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await this.redis.watch(this.documentKey, this.versionKey);
      let next: { text: string; value: T } | null;
      let version: number;
      try {
        const [text, current] = await this.redis.mget(this.documentKey, this.versionKey);
        next = change(typeof text === "string" ? text : null);
        version = Number(current ?? 0) + 1;
      } catch (error) {
        await this.redis.unwatch().catch(() => undefined);
        throw error;
      }
      if (next === null) {
        await this.redis.unwatch();
        return null;
      }
      const replies = await this.redis.multi().set(this.documentKey, next.text).incr(this.versionKey).publish(this.channel, String(version)).exec();
      if (replies === null) continue;
      for (const [error] of replies) if (error) throw error;
      this.version = version;
      return next.value;
    }
    throw new Error(`the shared config ${this.documentKey} changed under ${MAX_ATTEMPTS} attempts to write it; try again`);
  }

  /** The local file's shared sections, validated as the file (its own errors name the file). */
  private seedText(): string {
    parseConfigText(JSON.stringify(this.bootstrap.raw), this.bootstrap.file, this.env);
    return `${JSON.stringify(withoutLocalSections(this.bootstrap.raw), null, 2)}\n`;
  }

  /** The document with this instance's local sections, interpolated and validated like a config file. */
  private parse(text: string): Config {
    return parseConfigText(JSON.stringify(this.effectiveRaw(text)), this.label, this.env);
  }

  /** The document with this instance's local sections, as written (`${ENV}` references kept). */
  private effectiveRaw(text: string): RawConfig {
    return withLocalSections(parseRawConfig(text, this.label), this.bootstrap);
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work);
    this.turn = run.catch(() => undefined);
    return run;
  }
}
