import { Args, Flags } from "@oclif/core";
import { UsageError } from "../../src/cli/cli-error.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../src/cli/home.js";
import { editHomeConfig, loadHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { requirePlan, unknownPlan } from "../../src/cli/plan-names.js";
import { isRecord, objectAt } from "../../src/cli/raw-config.js";
import { canonicalPlanName } from "../../src/config/resolved-config.js";
import { setAgentPlan } from "../../src/store/provisioning.js";

export default class PlansSet extends GwCommand {
  static override description =
    "Change a plan's limits in config.json, or move an agent to a plan (--agent). An unknown name is refused (a typo would otherwise make a new plan); --create defines a new plan, based on free.";
  static override examples = [
    "<%= config.bin %> plans set pro --monthly-credits 50000000 --requests-per-minute 1200",
    "<%= config.bin %> plans set free --no-free-tier-only",
    "<%= config.bin %> plans set max --agent research",
    "<%= config.bin %> plans set gold --create --monthly-credits 100000000",
  ];
  static override args = { plan: Args.string({ description: "plan name or alias (a new name needs --create)", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    create: Flags.boolean({ description: "define PLAN when it does not exist yet (limits of free, plus those given)", default: false }),
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

  async run() {
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
    if (Object.keys(changes).length === 0 && flags.agent === undefined && !flags.create) {
      throw new UsageError("nothing to set: give a limit (e.g. --monthly-credits N), --agent NAME or --create (see `gw plans set --help`)");
    }
    const paths = await openHome(flags.home, { create: true });
    let config = await loadHomeConfig(paths);
    let plan = canonicalPlanName(config, args.plan);
    const created = !plan;
    if (!plan) {
      if (!flags.create) throw unknownPlan(config, args.plan, `; to define a new plan, add --create`);
      if (!/^[a-z0-9][a-z0-9_-]*$/.test(args.plan)) throw new UsageError(`plan name "${args.plan}": use lowercase letters, digits, - and _`);
      plan = args.plan;
    }
    if (Object.keys(changes).length > 0 || created) {
      const name = plan;
      ({ config } = await editHomeConfig(paths, (raw) => {
        const plans = objectAt(raw, "plans");
        const current = plans[name];
        plans[name] = { ...(isRecord(current) ? current : {}), ...changes };
      }));
    }
    const target = requirePlan(config, plan);
    const agentName = flags.agent;
    const agent = agentName === undefined ? undefined : await withMetadata(paths, (store) => setAgentPlan(store, agentName, target));
    const result = { plan: target, created, limits: config.resolvedPlans[target], ...(agent ? { agent: agent.name } : {}) };
    return this.shown(result, () => {
      if (created) printLine(`created plan ${target} (the limits of free${Object.keys(changes).length > 0 ? ", with those given" : ""})`);
      else if (Object.keys(changes).length > 0)
        printLine(
          `plan ${target}: set ${Object.entries(changes)
            .map(([key, value]) => `${key}=${String(value)}`)
            .join(", ")}`,
        );
      if (agent) printLine(`agent "${agent.name}" is now on plan ${target}`);
    });
  }
}
