// The config as the rest of the program uses it: parsed, env-interpolated, plans completed
// with their defaults. Built once per load/reload, then read without further work.
import { DEFAULT_PLANS, type ParsedConfig, type PlanLimits } from "./config-schema.js";
import type { EnvVariableUse } from "./env-references.js";

export interface Config extends ParsedConfig {
  /** Every plan with all limits filled in. */
  resolvedPlans: Record<string, PlanLimits>;
  /** Time the config was loaded; the default `created` of models that do not state one. */
  loadedAt: number;
  /** The `${NAME}` variables the file refers to and whether each was set when it was loaded. */
  envVariables: EnvVariableUse[];
}

export function resolveConfig(parsed: ParsedConfig, envVariables: EnvVariableUse[] = []): Config {
  const resolvedPlans: Record<string, PlanLimits> = {};
  for (const [name, limits] of Object.entries(DEFAULT_PLANS)) resolvedPlans[name] = { ...limits };
  for (const [name, overrides] of Object.entries(parsed.plans)) {
    const base = resolvedPlans[name] ?? DEFAULT_PLANS.free;
    resolvedPlans[name] = { ...base, ...stripUndefined(overrides) };
  }
  return { ...parsed, resolvedPlans, loadedAt: Math.floor(Date.now() / 1000), envVariables };
}

/** Canonical plan name for a name or alias (case-insensitive), or undefined when unknown. */
export function canonicalPlanName(config: Pick<Config, "resolvedPlans" | "planAliases">, name: string): string | undefined {
  const lower = name.toLowerCase();
  // Own keys only: `constructor` or `__proto__` is no plan.
  if (Object.hasOwn(config.resolvedPlans, lower)) return lower;
  const alias = Object.hasOwn(config.planAliases, lower) ? config.planAliases[lower] : undefined;
  return alias !== undefined && Object.hasOwn(config.resolvedPlans, alias) ? alias : undefined;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}
