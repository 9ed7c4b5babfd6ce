import { Args } from "@oclif/core";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../src/cli/home.js";
import { editHomeConfig, loadHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { removablePlan, removePlanEntry } from "../../src/cli/plan-removal.js";

export default class PlansRemove extends GwCommand {
  static override description =
    "Remove a plan from config.json, with the aliases that name it. Refused for the built-in plans (free, pro, max) and for a plan some agent is on (move them first with `gw plans set PLAN --agent NAME`).";
  static override examples = ["<%= config.bin %> plans remove gold"];
  static override args = { plan: Args.string({ description: "plan name (not an alias)", required: true }) };
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag };

  async run() {
    const { args, flags } = await this.parse(PlansRemove);
    const paths = await openHome(flags.home);
    const agents = await withMetadata(paths, async (store) => store.data.agents);
    const plan = removablePlan(await loadHomeConfig(paths), args.plan, agents);
    const { result } = await editHomeConfig(paths, (raw) => removePlanEntry(raw, plan));
    return this.shown(result, () => {
      const aliases =
        result.removedAliases.length > 0 ? ` and its ${result.removedAliases.length === 1 ? "alias" : "aliases"} ${result.removedAliases.join(", ")}` : "";
      printLine(`removed plan ${plan}${aliases}`);
    });
  }
}
