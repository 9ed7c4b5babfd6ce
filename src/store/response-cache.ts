// The response cache's entries as a port (docs/decisions.md §22): opaque values stored per agent
// under the hash of a request, each with a lifetime, the whole bounded in bytes with the least
// recently used entries evicted first. The gateway (gateway/cache/) decides what is cached and
// what a value holds; this port only keeps bytes. Two implementations: this home's
// (LocalResponseCache, a directory of entry files with the index in memory) and Redis's
// (RedisResponseCache, shared by several `gw serve` instances).

/** A request's hash: SHA-256, 64 lowercase hex digits. Only these become file names or keys. */
export const CACHE_HASH = /^[0-9a-f]{64}$/;

/** An agent id as the metadata stores make them (`agt_<ULID>`, or a name of that alphabet): the other half of a file name or key. */
export const CACHE_AGENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Whether an agent id and a hash may name an entry: a file name or a key is never built from anything else. */
export function isCacheEntry(agentId: string, hash: string): boolean {
  return CACHE_AGENT_ID.test(agentId) && CACHE_HASH.test(hash);
}

/** A put's arguments, refused when the caller got them wrong: a programming error, never a request's. */
export function checkCachePut(agentId: string, hash: string, ttlMs: number, maxBytes: number): void {
  if (!isCacheEntry(agentId, hash)) throw new Error(`not a response cache entry: agent ${JSON.stringify(agentId)}, hash ${JSON.stringify(hash)}`);
  if (!(Number.isSafeInteger(ttlMs) && ttlMs > 0)) throw new RangeError(`a response cache lifetime is a whole number of ms above 0, not ${ttlMs}`);
  if (!(Number.isSafeInteger(maxBytes) && maxBytes > 0)) throw new RangeError(`the response cache bound is a whole number of bytes above 0, not ${maxBytes}`);
}

export interface CacheTotals {
  entries: number;
  bytes: number;
}

export interface ResponseCacheStore {
  /**
   * The value stored under the agent's hash, or undefined when there is none or it outlived its
   * lifetime. A hit makes the entry the most recently used.
   */
  get(agentId: string, hash: string): Promise<Buffer | undefined>;
  /**
   * Store a value under the agent's hash for `ttlMs` (replacing one stored there), then evict the
   * least recently used entries, of any agent, until the total is at most `maxBytes`. A value
   * larger than `maxBytes` on its own is not stored.
   */
  put(agentId: string, hash: string, value: Buffer, ttlMs: number, maxBytes: number): Promise<void>;
  /** Live entries and their bytes, over every agent or one agent's. */
  totals(agentId?: string): Promise<CacheTotals>;
  /** Remove every entry, or one agent's; what was removed. */
  clear(agentId?: string): Promise<CacheTotals>;
  close(): Promise<void>;
}
