import { Args } from "@oclif/core";
import { removablePlan, removePlanEntry } from "../../src/admin/config-edits/plans.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../src/cli/home.js";
import { editHomeConfig, loadHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";

export default class PlansRemove extends GwCommand {
  static override description =
    "Remove a plan from config.json, with the aliases that name it. Refused for the built-in plans (free, pro, max) and for a plan some agent is on (move them first with `gw plans set PLAN --agent NAME`).";
  static override examples = ["<%= config.bin %> plans remove gold"];
  static override args = { plan: Args.string({ description: "plan name (not an alias)", required: true }) };
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, ...remoteAdminFlags };

  async run() {
    const { args, flags } = await this.parse(PlansRemove);
    const admin = remoteAdmin(flags);
    const result = admin ? await remotely(() => admin.removePlan(args.plan)) : await removeLocally(args.plan, flags.home);
    return this.shown(result, () => {
      const aliases =
        result.removedAliases.length > 0 ? ` and its ${result.removedAliases.length === 1 ? "alias" : "aliases"} ${result.removedAliases.join(", ")}` : "";
      printLine(`removed plan ${result.plan}${aliases}`);
    });
  }
}

async function removeLocally(name: string, home: string | undefined): Promise<{ plan: string; removedAliases: string[] }> {
  const paths = await openHome(home);
  const agents = await withMetadata(paths, async (store) => store.data.agents);
  const plan = removablePlan(await loadHomeConfig(paths), name, agents);
  return (await editHomeConfig(paths, (raw) => removePlanEntry(raw, plan))).result;
}
