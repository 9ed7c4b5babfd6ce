import { Args, Flags } from "@oclif/core";
import type { AgentListing } from "../../src/admin/agent-listing.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../src/cli/home.js";
import { loadHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { requirePlan } from "../../src/cli/plan-names.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";
import { createAgent } from "../../src/store/provisioning.js";
import type { AgentRecord } from "../../src/store/records.js";

export default class AgentsCreate extends GwCommand {
  static override description = "Create an agent (a tenant with its own plan, credits and storage).";
  static override examples = ["<%= config.bin %> agents create research --plan pro"];
  static override args = { name: Args.string({ description: "agent name", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    plan: Flags.string({ description: "plan name or alias (free, pro, max, assistant, engineer ...)", default: "free" }),
    json: jsonFlag,
    ...remoteAdminFlags,
  };

  async run() {
    const { args, flags } = await this.parse(AgentsCreate);
    const admin = remoteAdmin(flags);
    const agent = admin ? withoutKeyCount(await remotely(() => admin.createAgent(args.name, flags.plan))) : await this.createLocally(args.name, flags);
    return this.shown(agent, () => {
      printLine(`created agent "${agent.name}" (${agent.id}) on plan ${agent.plan}`);
    });
  }

  private async createLocally(name: string, flags: { home?: string; plan: string }): Promise<AgentRecord> {
    const paths = await openHome(flags.home, { create: true });
    const plan = requirePlan(await loadHomeConfig(paths), flags.plan);
    return withMetadata(paths, (store) => createAgent(store, name, plan));
  }
}

/** The agent as the local command prints it (a new agent has no keys to count). */
function withoutKeyCount({ activeKeys: _activeKeys, ...agent }: AgentListing): AgentRecord {
  return agent;
}
