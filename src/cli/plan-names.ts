// Plan names given on the command line: canonical names or aliases (assistant, engineer).
import { unknownPlanMessage } from "../admin/config-edits/plans.js";
import type { Config } from "../config/resolved-config.js";
import { canonicalPlanName } from "../config/resolved-config.js";
import { CliError } from "./cli-error.js";

export function requirePlan(config: Config, name: string, hint = ""): string {
  const plan = canonicalPlanName(config, name);
  if (plan) return plan;
  throw unknownPlan(config, name, hint);
}

/** `unknown plan "x": known plans are free, pro, max, assistant (= pro) ...`, then the hint. */
export function unknownPlan(config: Config, name: string, hint = ""): CliError {
  return new CliError(`${unknownPlanMessage(config, name)}${hint}`);
}
