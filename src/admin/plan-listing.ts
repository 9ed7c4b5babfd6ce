// Plans as `gw plans list` and the admin API list them: each with its resolved limits (defaults
// plus the config's) and the aliases that name it.
import type { PlanLimits } from "../config/config-schema.js";
import type { Config } from "../config/resolved-config.js";

export type PlanListing = PlanLimits & { name: string; aliases: string[] };

/** Aliases that point at the plan. */
export function aliasesOf(config: Config, plan: string): string[] {
  return Object.entries(config.planAliases)
    .filter(([, target]) => target === plan)
    .map(([alias]) => alias);
}

export function planListing(config: Config, plan: string): PlanListing {
  const limits = config.resolvedPlans[plan];
  if (!limits) throw new Error(`no plan "${plan}" in the config`);
  return { name: plan, aliases: aliasesOf(config, plan), ...limits };
}

export function planListings(config: Config): PlanListing[] {
  return Object.keys(config.resolvedPlans).map((plan) => planListing(config, plan));
}
