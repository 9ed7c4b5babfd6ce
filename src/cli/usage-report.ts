// `gw usage`: a period's usage rows and, per agent, credits used and the balance left.
import type { Config } from "../config/resolved-config.js";
import { canonicalPlanName } from "../config/resolved-config.js";
import { findAgent } from "../store/provisioning.js";
import type { MetadataData } from "../store/records.js";
import type { UsageRow } from "../store/usage-log.js";
import { CliError } from "./cli-error.js";

export interface AgentUsage {
  agent: string;
  plan: string;
  used: number;
  balance: number;
}

export interface UsageReport {
  period: string;
  agents: AgentUsage[];
  rows: UsageRow[];
  /** Rows of the period's log left out because their credits or agent are invalid; absent when none. */
  skipped?: number;
}

export function assertPeriod(period: string): void {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(period)) throw new CliError(`--period "${period}": expected YYYY-MM`);
}

/**
 * Rows name their agent by id (older rows may name it); both are matched. `skipped` counts the
 * log's invalid rows (never in `rows`), so the report can say that some were left out.
 */
export function usageReport(config: Config, metadata: MetadataData, period: string, rows: UsageRow[], agentFilter?: string, skipped = 0): UsageReport {
  let agents = metadata.agents;
  if (agentFilter !== undefined) {
    const agent = findAgent(metadata, agentFilter);
    if (!agent) throw new CliError(`no agent "${agentFilter}"`);
    agents = [agent];
  }
  const used = new Map<string, number>();
  const kept: UsageRow[] = [];
  for (const row of rows) {
    const agent = agents.find((candidate) => candidate.id === row.agent || candidate.name === row.agent);
    if (!agent) {
      if (agentFilter === undefined) kept.push(row);
      continue;
    }
    used.set(agent.id, (used.get(agent.id) ?? 0) + row.credits);
    kept.push(row);
  }
  return {
    period,
    agents: agents.map((agent) => {
      const plan = canonicalPlanName(config, agent.plan) ?? agent.plan;
      const allowance = config.resolvedPlans[plan]?.monthlyCredits ?? 0;
      const spent = used.get(agent.id) ?? 0;
      return { agent: agent.name, plan, used: spent, balance: allowance - spent };
    }),
    rows: kept,
    ...(skipped > 0 ? { skipped } : {}),
  };
}
