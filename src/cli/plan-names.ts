// Plan names given on the command line: canonical names or aliases (assistant, engineer).
import type { Config } from "../config/resolved-config.js";
import { canonicalPlanName } from "../config/resolved-config.js";
import { CliError } from "./cli-error.js";

export function requirePlan(config: Config, name: string): string {
  const plan = canonicalPlanName(config, name);
  if (plan) return plan;
  const aliases = Object.entries(config.planAliases).map(([alias, target]) => `${alias} (= ${target})`);
  throw new CliError(`unknown plan "${name}": known plans are ${[...Object.keys(config.resolvedPlans), ...aliases].join(", ")}`);
}

/** Aliases that point at each plan, for listings. */
export function aliasesOf(config: Config, plan: string): string[] {
  return Object.entries(config.planAliases)
    .filter(([, target]) => target === plan)
    .map(([alias]) => alias);
}
