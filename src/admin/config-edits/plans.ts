// Plans as `gw plans set|remove` and /admin/v1/plans change them (docs/decisions.md §25): limits
// set in the config, a new plan only when asked for (a typo would otherwise make one), and a plan
// removed together with the aliases naming it, unless it is built in or some agent is on it.
import type { RawConfig } from "../../config/config-file.js";
import { DEFAULT_PLANS, type PlanLimits } from "../../config/config-schema.js";
import { type Config, canonicalPlanName } from "../../config/resolved-config.js";
import type { AgentRecord } from "../../store/records.js";
import { AdminInputError, unknownPlanMessage } from "../admin-requests.js";
import { conflict, notFound } from "./config-edit-refusal.js";
import { isRecord, objectAt } from "./raw-config.js";

/** Plans every gw has (their defaults are in the code; the config only overrides limits). */
export const BUILT_IN_PLANS: readonly string[] = Object.keys(DEFAULT_PLANS);

/** The limits a plan change may set; an absent one stays as it is. */
export type PlanLimitChanges = Partial<PlanLimits>;

export { unknownPlanMessage };

/**
 * The plan a change of NAME's limits applies to: the plan it names (or is an alias of), or with
 * `create` a new plan of that name. `hint` ends the refusal of an unknown name (how to create one).
 */
export function planToSet(config: Config, name: string, create: boolean, hint: string): { plan: string; created: boolean } {
  const plan = canonicalPlanName(config, name);
  if (plan) return { plan, created: false };
  if (!create) throw notFound(`${unknownPlanMessage(config, name)}${hint}`);
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(name)) throw new AdminInputError("plan", `plan name "${name}": use lowercase letters, digits, - and _`);
  return { plan: name, created: true };
}

/** Inside a config edit: set the given limits of PLAN (a new plan starts from free's). */
export function setPlanLimits(raw: RawConfig, plan: string, changes: PlanLimitChanges): void {
  const plans = objectAt(raw, "plans");
  const current = plans[plan];
  plans[plan] = { ...(isRecord(current) ? current : {}), ...changes };
}

/** The plan NAME names, refused when it is an alias, unknown, built in, or some agent's plan. */
export function removablePlan(config: Config, name: string, agents: readonly AgentRecord[]): string {
  const plan = name.toLowerCase();
  const aliasTarget = Object.hasOwn(config.planAliases, plan) ? config.planAliases[plan] : undefined;
  if (aliasTarget !== undefined) {
    throw conflict(`"${plan}" is an alias of plan ${aliasTarget}, not a plan: \`gw plans remove ${aliasTarget}\` removes the plan and its aliases`);
  }
  if (BUILT_IN_PLANS.includes(plan)) {
    // resolveConfig always adds them back, and new agents start on free.
    throw conflict(
      `plan "${plan}" is built in and cannot be removed: ${BUILT_IN_PLANS.join(", ")} always exist (new agents start on free); change its limits with \`gw plans set ${plan} ...\``,
    );
  }
  if (!Object.hasOwn(config.resolvedPlans, plan)) throw notFound(unknownPlanMessage(config, name));
  const users = agents.filter((agent) => agent.plan.toLowerCase() === plan).map((agent) => agent.name);
  if (users.length > 0) {
    throw conflict(
      `plan "${plan}" is used by ${users.length === 1 ? "agent" : "agents"} ${users.join(", ")}: move ${users.length === 1 ? "it" : "them"} to another plan first (\`gw plans set PLAN --agent NAME\`)`,
    );
  }
  return plan;
}

/** Inside a config edit: drop plans[PLAN] and every planAliases entry that names it. */
export function removePlanEntry(raw: RawConfig, plan: string): { plan: string; removedAliases: string[] } {
  const plans = objectAt(raw, "plans");
  if (plans[plan] === undefined) throw notFound(`no plan "${plan}" in config.json`);
  delete plans[plan];
  const aliases = isRecord(raw.planAliases) ? raw.planAliases : {};
  const removedAliases = Object.keys(aliases).filter((alias) => aliases[alias] === plan);
  for (const alias of removedAliases) delete aliases[alias];
  return { plan, removedAliases };
}
