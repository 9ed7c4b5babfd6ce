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
}

export interface MetadataData {
  version: 1;
  agents: AgentRecord[];
  keys: KeyRecord[];
}

export function emptyMetadata(): MetadataData {
  return { version: 1, agents: [], keys: [] };
}
