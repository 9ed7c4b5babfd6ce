// Agents as `gw agents list` and GET /admin/v1/agents show them: each with its plan and how many live keys it has.
import type { AgentRecord, MetadataData } from "../store/records.js";

export interface AgentListing extends AgentRecord {
  activeKeys: number;
}

export function agentListing(data: MetadataData): AgentListing[] {
  const live = new Map<string, number>();
  for (const key of data.keys) if (key.revokedAt === null) live.set(key.agentId, (live.get(key.agentId) ?? 0) + 1);
  return data.agents.map((agent) => ({ ...agent, activeKeys: live.get(agent.id) ?? 0 }));
}
