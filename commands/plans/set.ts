import { Args, Flags } from "@oclif/core";
import { AdminInputError } from "../../src/admin/admin-requests.js";
import { type PlanLimitChanges, planToSet, setPlanLimits } from "../../src/admin/config-edits/plans.js";
import { UsageError } from "../../src/cli/cli-error.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../src/cli/home.js";
import { editHomeConfig, loadHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { requirePlan } from "../../src/cli/plan-names.js";
import { type RemoteAdminFlags, remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";
import type { AdminClient } from "../../src/client/admin-client.js";
import type { PlanLimits } from "../../src/config/config-schema.js";
import { setAgentPlan } from "../../src/store/provisioning.js";

interface PlanSetResult {
  plan: string;
  created: boolean;
  limits: PlanLimits | undefined;
  agent?: string;
}

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
    ...remoteAdminFlags,
  };

  async run() {
    const { args, flags } = await this.parse(PlansSet);
    const limits = {
      monthlyCredits: flags["monthly-credits"],
      requestsPerMinute: flags["requests-per-minute"],
      imageMaxN: flags["image-max-n"],
      imageMaxResolution: flags["image-max-resolution"] as PlanLimits["imageMaxResolution"] | undefined,
      storageBytes: flags["storage-bytes"],
      storageOperationsPerPeriod: flags["storage-operations"],
      freeTierOnly: flags["free-tier-only"],
      lowLatencyRouting: flags["low-latency-routing"],
    };
    const changes: PlanLimitChanges = Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined));
    if (Object.keys(changes).length === 0 && flags.agent === undefined && !flags.create) {
      throw new UsageError("nothing to set: give a limit (e.g. --monthly-credits N), --agent NAME or --create (see `gw plans set --help`)");
    }
    const admin = remoteAdmin(flags);
    const result = admin ? await setRemotely(admin, args.plan, changes, flags) : await setLocally(args.plan, changes, flags);
    return this.shown(result, () => {
      if (result.created) printLine(`created plan ${result.plan} (the limits of free${Object.keys(changes).length > 0 ? ", with those given" : ""})`);
      else if (Object.keys(changes).length > 0)
        printLine(
          `plan ${result.plan}: set ${Object.entries(changes)
            .map(([key, value]) => `${key}=${String(value)}`)
            .join(", ")}`,
        );
      if (result.agent !== undefined) printLine(`agent "${result.agent}" is now on plan ${result.plan}`);
    });
  }
}

interface PlanSetFlags extends RemoteAdminFlags {
  home?: string;
  create: boolean;
  agent?: string;
}

async function setLocally(name: string, changes: PlanLimitChanges, flags: PlanSetFlags): Promise<PlanSetResult> {
  const paths = await openHome(flags.home, { create: true });
  let config = await loadHomeConfig(paths);
  const { plan, created } = newPlanNameChecked(() => planToSet(config, name, flags.create, "; to define a new plan, add --create"));
  if (Object.keys(changes).length > 0 || created) ({ config } = await editHomeConfig(paths, (raw) => setPlanLimits(raw, plan, changes)));
  const target = requirePlan(config, plan);
  const agentName = flags.agent;
  const agent = agentName === undefined ? undefined : await withMetadata(paths, (store) => setAgentPlan(store, agentName, target));
  return { plan: target, created, limits: config.resolvedPlans[target], ...(agent ? { agent: agent.name } : {}) };
}

/** The gateway changes the plan (PUT /admin/v1/plans/{plan}), then moves the agent (PATCH /admin/v1/agents/{name}). */
async function setRemotely(admin: AdminClient, name: string, changes: PlanLimitChanges, flags: PlanSetFlags): Promise<PlanSetResult> {
  let plan = name;
  let created = false;
  let limits: PlanLimits | undefined;
  if (Object.keys(changes).length > 0 || flags.create) {
    const {
      name: canonical,
      aliases: _aliases,
      created: made,
      ...resolved
    } = await remotely(() => admin.setPlan(name, { ...changes, ...(flags.create ? { create: true } : {}) }));
    plan = canonical;
    created = made;
    limits = resolved;
  }
  const agentName = flags.agent;
  const agent = agentName === undefined ? undefined : await remotely(() => admin.setAgentPlan(agentName, plan));
  if (agent) plan = agent.plan;
  if (!limits) {
    const listed = (await remotely(() => admin.plans())).find((candidate) => candidate.name === plan);
    if (listed) {
      const { name: _name, aliases: _aliases, ...resolved } = listed;
      limits = resolved;
    }
  }
  return { plan, created, limits, ...(agent ? { agent: agent.name } : {}) };
}

/** A new plan's name of the wrong form is wrong in itself: a usage error (exit 2). */
function newPlanNameChecked<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof AdminInputError) throw new UsageError(error.message);
    throw error;
  }
}
