import { Flags } from "@oclif/core";
import { CliError } from "../../src/cli/cli-error.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../src/cli/home.js";
import { printJson, printTable } from "../../src/cli/output.js";
import { findAgent } from "../../src/store/provisioning.js";

export default class KeysList extends GwCommand {
  static override description = "List API keys by visible prefix (keys and their hashes are never shown).";
  static override flags = {
    agent: Flags.string({ description: "only this agent's keys" }),
    json: jsonFlag,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(KeysList);
    const paths = await openHome(flags.home);
    const data = await withMetadata(paths, async (store) => store.data);
    const only = flags.agent === undefined ? undefined : findAgent(data, flags.agent);
    if (flags.agent !== undefined && !only) throw new CliError(`no agent "${flags.agent}"`);
    const names = new Map(data.agents.map((agent) => [agent.id, agent.name]));
    const keys = data.keys
      .filter((key) => !only || key.agentId === only.id)
      .map((key) => ({ id: key.id, prefix: key.prefix, agent: names.get(key.agentId) ?? key.agentId, createdAt: key.createdAt, revokedAt: key.revokedAt }));
    if (flags.json) return printJson(keys);
    printTable(
      ["PREFIX", "AGENT", "CREATED", "REVOKED"],
      keys.map((key) => [key.prefix, key.agent, key.createdAt, key.revokedAt]),
      "no keys (create one with `gw keys create --agent NAME`)",
    );
  }
}
