// Agent and key changes, shared by the CLI (with or without a running server) and the server.
// Each runs as one locked read-modify-write of the metadata file.
import { ulid } from "ulid";
import { generateApiKey, hashApiKey, KEY_PATTERN, visiblePrefix } from "./api-keys.js";
import type { MetadataRecords } from "./metadata-store.js";
import type { AgentRecord, KeyLimits, KeyRecord, MetadataData } from "./records.js";

export class ProvisioningError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProvisioningError";
  }
}

export function findAgent(data: MetadataData, nameOrId: string): AgentRecord | undefined {
  return data.agents.find((agent) => agent.name === nameOrId || agent.id === nameOrId);
}

export async function createAgent(store: MetadataRecords, name: string, plan: string): Promise<AgentRecord> {
  return store.mutate((data) => {
    if (findAgent(data, name)) throw new ProvisioningError(`agent "${name}" already exists`);
    const agent: AgentRecord = { id: `agt_${ulid()}`, name, plan, createdAt: new Date().toISOString() };
    data.agents.push(agent);
    return agent;
  });
}

export interface CreatedKey {
  key: string;
  record: KeyRecord;
  agent: AgentRecord;
}

/** Create a key for an agent, creating the agent (with `plan`) when it does not exist yet. */
export async function createKey(
  store: MetadataRecords,
  agentName: string,
  plan: string | undefined,
  defaultPlan: string,
  limits: KeyLimits = {},
): Promise<CreatedKey> {
  const key = generateApiKey();
  return store.mutate((data) => {
    let agent = findAgent(data, agentName);
    if (!agent) {
      agent = { id: `agt_${ulid()}`, name: agentName, plan: plan ?? defaultPlan, createdAt: new Date().toISOString() };
      data.agents.push(agent);
    } else if (plan && agent.plan !== plan) {
      agent.plan = plan;
    }
    const record: KeyRecord = {
      id: `key_${ulid()}`,
      prefix: visiblePrefix(key),
      hash: hashApiKey(key),
      agentId: agent.id,
      createdAt: new Date().toISOString(),
      revokedAt: null,
    };
    applyLimits(record, limits);
    data.keys.push(record);
    return { key, record: { ...record }, agent: { ...agent } };
  });
}

/** Change a live key's limits (`gw keys set`); a `null` limit is removed. */
export async function setKeyLimits(store: MetadataRecords, prefixOrId: string, limits: KeyLimits): Promise<KeyRecord> {
  return store.mutate((data) => {
    const key = liveKey(data, prefixOrId);
    applyLimits(key, limits);
    return { ...key };
  });
}

function applyLimits(record: KeyRecord, limits: KeyLimits): void {
  for (const field of ["name", "budget", "expiresAt", "models", "rpm", "tpm", "cacheTtlSeconds"] as const) {
    const value = limits[field];
    if (value === undefined) continue;
    if (value === null) delete record[field];
    else Object.assign(record, { [field]: value });
  }
}

/** The one live key a prefix (or id) names; refuses none and an ambiguous prefix. */
function liveKey(data: MetadataData, prefixOrId: string): KeyRecord {
  const live = data.keys.filter((key) => key.revokedAt === null && (key.prefix.startsWith(prefixOrId) || key.id === prefixOrId));
  const [key] = live;
  if (key === undefined) throw new ProvisioningError(`no active key matches "${prefixOrId}"`);
  if (live.length > 1) throw new ProvisioningError(`"${prefixOrId}" matches ${live.length} keys; give more of the prefix`);
  return key;
}

/** Register an existing key (a migration, or the benchmark's fixed key). Only its hash is kept. */
export async function importKey(store: MetadataRecords, agentName: string, plan: string, key: string): Promise<CreatedKey> {
  if (!KEY_PATTERN.test(key)) throw new ProvisioningError("a gw key is `gw_` followed by at least 43 letters and digits");
  return store.mutate((data) => {
    const hash = hashApiKey(key);
    if (data.keys.some((existing) => existing.hash === hash)) throw new ProvisioningError("this key is already registered");
    let agent = findAgent(data, agentName);
    if (!agent) {
      agent = { id: `agt_${ulid()}`, name: agentName, plan, createdAt: new Date().toISOString() };
      data.agents.push(agent);
    }
    const record: KeyRecord = {
      id: `key_${ulid()}`,
      prefix: visiblePrefix(key),
      hash,
      agentId: agent.id,
      createdAt: new Date().toISOString(),
      revokedAt: null,
    };
    data.keys.push(record);
    return { key, record, agent: { ...agent } };
  });
}

/** Revoke every live key whose visible prefix (or id) matches; refuses an ambiguous prefix. */
export async function revokeKey(store: MetadataRecords, prefixOrId: string): Promise<KeyRecord> {
  return store.mutate((data) => {
    const key = liveKey(data, prefixOrId);
    key.revokedAt = new Date().toISOString();
    return { ...key };
  });
}

export async function setAgentPlan(store: MetadataRecords, agentName: string, plan: string): Promise<AgentRecord> {
  return store.mutate((data) => {
    const agent = findAgent(data, agentName);
    if (!agent) throw new ProvisioningError(`no agent "${agentName}"`);
    agent.plan = plan;
    return { ...agent };
  });
}
