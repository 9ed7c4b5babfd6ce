// `gw plans remove NAME`: which plans may go, and the config edit that takes one out together
// with the aliases naming it (an alias left behind would make config.json invalid).
import type { RawConfig } from "../config/config-file.js";
import type { Config } from "../config/resolved-config.js";
import type { AgentRecord } from "../store/records.js";
import { CliError } from "./cli-error.js";
import { BUILT_IN_PLANS, unknownPlan } from "./plan-names.js";
import { isRecord, objectAt } from "./raw-config.js";

/** The plan NAME names, refused when it is an alias, unknown, built in, or some agent's plan. */
export function removablePlan(config: Config, name: string, agents: readonly AgentRecord[]): string {
  const plan = name.toLowerCase();
  const aliasTarget = Object.hasOwn(config.planAliases, plan) ? config.planAliases[plan] : undefined;
  if (aliasTarget !== undefined) {
    throw new CliError(`"${plan}" is an alias of plan ${aliasTarget}, not a plan: \`gw plans remove ${aliasTarget}\` removes the plan and its aliases`);
  }
  if (BUILT_IN_PLANS.includes(plan)) {
    // resolveConfig always adds them back, and new agents start on free.
    throw new CliError(
      `plan "${plan}" is built in and cannot be removed: ${BUILT_IN_PLANS.join(", ")} always exist (new agents start on free); change its limits with \`gw plans set ${plan} ...\``,
    );
  }
  if (!Object.hasOwn(config.resolvedPlans, plan)) throw unknownPlan(config, name);
  const users = agents.filter((agent) => agent.plan.toLowerCase() === plan).map((agent) => agent.name);
  if (users.length > 0) {
    throw new CliError(
      `plan "${plan}" is used by ${users.length === 1 ? "agent" : "agents"} ${users.join(", ")}: move ${users.length === 1 ? "it" : "them"} to another plan first (\`gw plans set PLAN --agent NAME\`)`,
    );
  }
  return plan;
}

/** Inside editConfig: drop plans[PLAN] and every planAliases entry that names it. */
export function removePlanEntry(raw: RawConfig, plan: string): { plan: string; removedAliases: string[] } {
  const plans = objectAt(raw, "plans");
  if (plans[plan] === undefined) throw new CliError(`no plan "${plan}" in config.json`);
  delete plans[plan];
  const aliases = isRecord(raw.planAliases) ? raw.planAliases : {};
  const removedAliases = Object.keys(aliases).filter((alias) => aliases[alias] === plan);
  for (const alias of removedAliases) delete aliases[alias];
  return { plan, removedAliases };
}
