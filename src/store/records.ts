// Records kept in the metadata store. Every record is scoped to an agent.

export interface AgentRecord {
  id: string;
  name: string;
  plan: string;
  createdAt: string;
}

export interface KeyRecord {
  id: string;
  /** Visible prefix (`gw_` + a few characters) used to name the key in lists and usage rows. */
  prefix: string;
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  hash: string;
  agentId: string;
  createdAt: string;
  revokedAt: string | null;
  /** A label for people (`--name`); never shown to the key's holder's upstreams or in metrics. */
  name?: string;
  /** The key's own spending cap, on top of its agent's plan (docs/decisions.md §10). */
  budget?: KeyBudget;
  /** After this instant (ISO 8601) the key answers 401 saying it expired. */
  expiresAt?: string;
  /** Model patterns (`*` matches any run of characters) the key may call; absent = every model. */
  models?: string[];
  /** Requests and tokens per minute for this key, on top of the plan's requests per minute. */
  rpm?: number;
  tpm?: number;
  /** Seconds the response cache keeps this key's answers (docs/decisions.md §22); absent = the key does not cache. */
  cacheTtlSeconds?: number;
}

export interface KeyBudget {
  credits: number;
  /** `month`: resets with the calendar month (UTC), like the plan; `total`: over the key's life. */
  period: "month" | "total";
}

/** The limits `gw keys create` and `gw keys set` take; `null` clears one. */
export interface KeyLimits {
  name?: string | null;
  budget?: KeyBudget | null;
  expiresAt?: string | null;
  models?: string[] | null;
  rpm?: number | null;
  tpm?: number | null;
  cacheTtlSeconds?: number | null;
}

/**
 * A token for the admin API and console (docs/decisions.md §25), never for the model endpoints.
 * Kept beside the agents and keys, so every instance sees it at once; only its hash is stored.
 */
export interface AdminTokenRecord {
  id: string;
  name: string;
  /** Visible prefix (`gwa_` + a few characters), to name the token in lists and the audit log. */
  prefix: string;
  /** SHA-256 of the whole token, hex. */
  hash: string;
  /** Reads only: any change answers 403. */
  readOnly: boolean;
  createdAt: string;
  /** After this instant (ISO 8601) the token answers 401 saying it expired. */
  expiresAt?: string;
  revokedAt: string | null;
}

export interface MetadataData {
  version: 1;
  agents: AgentRecord[];
  keys: KeyRecord[];
  /** Absent in a home that never made one (and in every home older than the admin API). */
  adminTokens?: AdminTokenRecord[];
}

export function emptyMetadata(): MetadataData {
  return { version: 1, agents: [], keys: [] };
}
