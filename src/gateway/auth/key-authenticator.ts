// Resolves a presented API key to its agent and plan. Keys are looked up by SHA-256 hash in an
// index rebuilt whenever the metadata store changes; the hashes are compared in constant time.
// Missing, malformed, unknown and revoked keys all get the same InvalidApiKeyError; a key past
// its expiry gets it with a message saying so.
import { hashApiKey, hashesEqual, KEY_PATTERN } from "../../store/api-keys.js";
import type { MetadataRecords } from "../../store/metadata-store.js";
import type { AgentRecord, KeyRecord } from "../../store/records.js";
import { InvalidApiKeyError } from "../errors.js";
import { assertKeyNotExpired } from "./key-limits.js";

export interface Caller {
  agent: AgentRecord;
  key: KeyRecord;
}

export class KeyAuthenticator {
  private index = new Map<string, Caller>();
  /** The same callers by key id (a batch names the key that created it). */
  private byKeyId = new Map<string, Caller>();
  private lastRefresh = 0;

  constructor(
    private readonly store: MetadataRecords,
    /** Wall-clock milliseconds, for expiries (tests move time by hand). */
    private readonly now: () => number = Date.now,
  ) {
    this.rebuild();
    store.onChange(() => this.rebuild());
  }

  /** `presented` is the raw key (from `Authorization: Bearer` or `x-api-key`). */
  async authenticate(presented: string | undefined | null): Promise<Caller> {
    if (!presented || !KEY_PATTERN.test(presented)) throw new InvalidApiKeyError();
    await this.refreshNowAndThen();
    const hash = hashApiKey(presented);
    let caller = this.index.get(hash);
    // A key created by another process (or instance) a moment ago: re-read the store if it changed.
    // Looked up again whatever the reload says: a concurrent request's reload may be the one that read it.
    if (!caller) {
      await this.store.reloadIfChanged();
      caller = this.index.get(hash);
    }
    if (!caller || caller.key.revokedAt !== null || !hashesEqual(hash, caller.key.hash)) throw new InvalidApiKeyError();
    assertKeyNotExpired(caller.key, this.now());
    return caller;
  }

  /** The caller a key stands for, by the key's id (a batch runs with the key that created it); undefined once it is revoked, expired or gone. */
  callerOfKey(keyId: string): Caller | undefined {
    const caller = this.byKeyId.get(keyId);
    return caller?.key.expiresAt !== undefined && Date.parse(caller.key.expiresAt) <= this.now() ? undefined : caller;
  }

  /** The file watcher usually reports CLI changes first; this bounds the delay if it does not. */
  private async refreshNowAndThen(): Promise<void> {
    const now = performance.now();
    if (now - this.lastRefresh < 250) return;
    this.lastRefresh = now;
    await this.store.reloadIfChanged();
  }

  private rebuild(): void {
    const agents = new Map(this.store.data.agents.map((agent) => [agent.id, agent]));
    const index = new Map<string, Caller>();
    const byKeyId = new Map<string, Caller>();
    for (const key of this.store.data.keys) {
      const agent = agents.get(key.agentId);
      if (!agent || key.revokedAt !== null) continue;
      const caller = { agent, key };
      index.set(key.hash, caller);
      byKeyId.set(key.id, caller);
    }
    this.index = index;
    this.byKeyId = byKeyId;
  }
}

export function bearerToken(header: string | null): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}
