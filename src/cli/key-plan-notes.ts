// What `gw keys create` and `gw keys set` say about a key's plan, since the plan's limits apply on
// top of the key's own (docs/decisions.md §10): a new agent put on the default plan, and an --rpm
// above the plan's requests per minute, which the key never gets.
import { type Config, canonicalPlanName } from "../config/resolved-config.js";
import type { AgentRecord, KeyRecord } from "../store/records.js";

export interface KeyPlanFacts {
  agent: Pick<AgentRecord, "name" | "plan">;
  key: Pick<KeyRecord, "rpm">;
  /** The agent was created with this key, on the default plan (no --plan given). */
  agentCreatedOnDefaultPlan?: boolean;
}

export function keyPlanNotes(config: Config, { agent, key, agentCreatedOnDefaultPlan }: KeyPlanFacts): string[] {
  const notes: string[] = [];
  const planName = canonicalPlanName(config, agent.plan) ?? agent.plan;
  if (agentCreatedOnDefaultPlan) {
    notes.push(
      `note: agent "${agent.name}" is new: it is on the ${planName} plan (pass --plan to choose, or move it with \`gw plans set PLAN --agent ${agent.name}\`)`,
    );
  }
  const planRpm = Object.hasOwn(config.resolvedPlans, planName) ? config.resolvedPlans[planName]?.requestsPerMinute : undefined;
  if (key.rpm !== undefined && planRpm !== undefined && key.rpm > planRpm) {
    notes.push(
      `warning: --rpm ${key.rpm} is above the ${planName} plan's ${planRpm} requests a minute: the key gets ${planRpm} (a key's --rpm can only lower its plan's)`,
    );
  }
  return notes;
}
