import { agentListing } from "../../src/admin/agent-listing.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../src/cli/home.js";
import { printTable } from "../../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";

export default class AgentsList extends GwCommand {
  static override description = "List agents with their plan and number of active keys.";
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, ...remoteAdminFlags };

  async run() {
    const { flags } = await this.parse(AgentsList);
    const admin = remoteAdmin(flags);
    const agents = admin ? await remotely(() => admin.agents()) : agentListing(await withMetadata(await openHome(flags.home), async (store) => store.data));
    return this.shown(agents, () => {
      printTable(
        ["NAME", "ID", "PLAN", "KEYS", "CREATED"],
        agents.map((agent) => [agent.name, agent.id, agent.plan, agent.activeKeys, agent.createdAt]),
        "no agents (create one with `gw agents create NAME` or `gw keys create --agent NAME`)",
      );
    });
  }
}
