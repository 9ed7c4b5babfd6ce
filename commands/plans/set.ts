import { Args, Flags } from "@oclif/core";
import { editConfig } from "../../src/config/config-file.js";
import { canonicalPlanName } from "../../src/config/resolved-config.js";
import { CliError } from "../../src/cli/cli-error.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { loadConfig, openHome, withMetadata } from "../../src/cli/home.js";
import { printJson, printLine } from "../../src/cli/output.js";
import { requirePlan } from "../../src/cli/plan-names.js";
import { isRecord, objectAt } from "../../src/cli/raw-config.js";
import { setAgentPlan } from "../../src/store/provisioning.js";

export default class PlansSet extends GwCommand {
  static override description = "Change a plan's limits in config.json, or move an agent to a plan (--agent).";
  static override examples = [
    "<%= config.bin %> plans set pro --monthly-credits 50000000 --requests-per-minute 1200",
    "<%= config.bin %> plans set free --no-free-tier-only",
    "<%= config.bin %> plans set max --agent research",
  ];
  static override args = { plan: Args.string({ description: "plan name or alias; a new name defines a plan based on free", required: true }) };
  static override flags = {
    agent: Flags.string({ description: "move this agent to the plan" }),
    "monthly-credits": Flags.integer({ description: "credits per calendar month (UTC)" }),
    "requests-per-minute": Flags.integer({ description: "requests per minute, per key" }),
    "image-max-n": Flags.integer({ description: "largest image `n`" }),
    "image-max-resolution": Flags.string({ description: "largest image resolution", options: ["512", "1K", "2K", "4K"] }),
    "storage-bytes": Flags.integer({ description: "storage quota in bytes" }),
    "storage-operations": Flags.integer({ description: "storage operations (upload, presigned upload, delete) per period" }),
    "free-tier-only": Flags.boolean({ description: "reach only routes flagged freeTier", allowNo: true }),
    "low-latency-routing": Flags.boolean({ description: "prefer the upstream with the lowest recent latency", allowNo: true }),
    json: jsonFlag,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(PlansSet);
    const limits = {
      monthlyCredits: flags["monthly-credits"],
      requestsPerMinute: flags["requests-per-minute"],
      imageMaxN: flags["image-max-n"],
      imageMaxResolution: flags["image-max-resolution"],
      storageBytes: flags["storage-bytes"],
      storageOperationsPerPeriod: flags["storage-operations"],
      freeTierOnly: flags["free-tier-only"],
      lowLatencyRouting: flags["low-latency-routing"],
    };
    const changes = Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined));
    if (Object.keys(changes).length === 0 && flags.agent === undefined) {
      throw new CliError("nothing to set: give a limit (e.g. --monthly-credits N) or --agent NAME (see `gw plans set --help`)");
    }
    const paths = await openHome(flags.home, { create: true });
    let config = loadConfig(paths);
    let plan = canonicalPlanName(config, args.plan);
    if (Object.keys(changes).length > 0) {
      if (!plan) {
        if (!/^[a-z0-9][a-z0-9_-]*$/.test(args.plan)) throw new CliError(`plan name "${args.plan}": use lowercase letters, digits, - and _`);
        plan = args.plan;
      }
      const name = plan;
      ({ config } = await editConfig(paths.config, (raw) => {
        const plans = objectAt(raw, "plans");
        const current = plans[name];
        plans[name] = { ...(isRecord(current) ? current : {}), ...changes };
      }));
    }
    const target = requirePlan(config, plan ?? args.plan);
    const agentName = flags.agent;
    const agent = agentName === undefined ? undefined : await withMetadata(paths, (store) => setAgentPlan(store, agentName, target));
    const result = { plan: target, limits: config.resolvedPlans[target], ...(agent ? { agent: agent.name } : {}) };
    if (flags.json) return printJson(result);
    if (Object.keys(changes).length > 0) printLine(`plan ${target}: set ${Object.entries(changes).map(([key, value]) => `${key}=${String(value)}`).join(", ")}`);
    if (agent) printLine(`agent "${agent.name}" is now on plan ${target}`);
  }
}
