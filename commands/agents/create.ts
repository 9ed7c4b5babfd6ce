import { Args, Flags } from "@oclif/core";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../src/cli/home.js";
import { loadHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { requirePlan } from "../../src/cli/plan-names.js";
import { createAgent } from "../../src/store/provisioning.js";

export default class AgentsCreate extends GwCommand {
  static override description = "Create an agent (a tenant with its own plan, credits and storage).";
  static override examples = ["<%= config.bin %> agents create research --plan pro"];
  static override args = { name: Args.string({ description: "agent name", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    plan: Flags.string({ description: "plan name or alias (free, pro, max, assistant, engineer ...)", default: "free" }),
    json: jsonFlag,
  };

  async run() {
    const { args, flags } = await this.parse(AgentsCreate);
    const paths = await openHome(flags.home, { create: true });
    const plan = requirePlan(await loadHomeConfig(paths), flags.plan);
    const agent = await withMetadata(paths, (store) => createAgent(store, args.name, plan));
    return this.shown(agent, () => {
      printLine(`created agent "${agent.name}" (${agent.id}) on plan ${agent.plan}`);
    });
  }
}
