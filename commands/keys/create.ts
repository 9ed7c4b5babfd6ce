import { Flags } from "@oclif/core";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { loadConfig, openHome, withMetadata } from "../../src/cli/home.js";
import { note, printJson, printLine } from "../../src/cli/output.js";
import { requirePlan } from "../../src/cli/plan-names.js";
import { createKey } from "../../src/store/provisioning.js";

export default class KeysCreate extends GwCommand {
  static override description = "Create an API key for an agent (the agent is created when missing). The key is shown once.";
  static override examples = [
    "export GW_API_KEY=$(<%= config.bin %> keys create --agent research)",
    "<%= config.bin %> keys create --agent research --plan pro --json",
  ];
  static override flags = {
    agent: Flags.string({ description: "agent name (created when it does not exist)", required: true }),
    plan: Flags.string({ description: "plan for the agent (sets it on an existing agent) [default for a new agent: free]" }),
    json: jsonFlag,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(KeysCreate);
    const paths = await openHome(flags.home, { create: true });
    const plan = flags.plan === undefined ? undefined : requirePlan(loadConfig(paths), flags.plan);
    const created = await withMetadata(paths, (store) => createKey(store, flags.agent, plan, "free"));
    if (flags.json) return printJson({ key: created.key, agent: created.agent.name, plan: created.agent.plan });
    printLine(created.key);
    note(`key ${created.record.prefix}… for agent "${created.agent.name}" (plan ${created.agent.plan}); it is shown only this once`);
  }
}
