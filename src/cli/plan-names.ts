// Plan names given on the command line: canonical names or aliases (assistant, engineer).
import { DEFAULT_PLANS } from "../config/config-schema.js";
import type { Config } from "../config/resolved-config.js";
import { canonicalPlanName } from "../config/resolved-config.js";
import { CliError } from "./cli-error.js";

/** Plans every gw has (their defaults are in the code; config.json only overrides limits). */
export const BUILT_IN_PLANS: readonly string[] = Object.keys(DEFAULT_PLANS);

export function requirePlan(config: Config, name: string, hint = ""): string {
  const plan = canonicalPlanName(config, name);
  if (plan) return plan;
  throw unknownPlan(config, name, hint);
}

/** `unknown plan "x": known plans are free, pro, max, assistant (= pro) ...`, then the hint. */
export function unknownPlan(config: Config, name: string, hint = ""): CliError {
  const aliases = Object.entries(config.planAliases).map(([alias, target]) => `${alias} (= ${target})`);
  return new CliError(`unknown plan "${name}": known plans are ${[...Object.keys(config.resolvedPlans), ...aliases].join(", ")}${hint}`);
}

/** Aliases that point at each plan, for listings. */
export function aliasesOf(config: Config, plan: string): string[] {
  return Object.entries(config.planAliases)
    .filter(([, target]) => target === plan)
    .map(([alias]) => alias);
}
