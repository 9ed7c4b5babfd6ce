import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../src/cli/home.js";
import { printTable } from "../../src/cli/output.js";

export default class AgentsList extends GwCommand {
  static override description = "List agents with their plan and number of active keys.";
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag };

  async run() {
    const { flags } = await this.parse(AgentsList);
    const paths = await openHome(flags.home);
    const data = await withMetadata(paths, async (store) => store.data);
    const agents = data.agents.map((agent) => ({
      ...agent,
      activeKeys: data.keys.filter((key) => key.agentId === agent.id && key.revokedAt === null).length,
    }));
    return this.shown(agents, () => {
      printTable(
        ["NAME", "ID", "PLAN", "KEYS", "CREATED"],
        agents.map((agent) => [agent.name, agent.id, agent.plan, agent.activeKeys, agent.createdAt]),
        "no agents (create one with `gw agents create NAME` or `gw keys create --agent NAME`)",
      );
    });
  }
}
