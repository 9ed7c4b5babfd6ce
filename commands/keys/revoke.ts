import { Args } from "@oclif/core";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../src/cli/home.js";
import { printLine } from "../../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";
import { revokeKey } from "../../src/store/provisioning.js";

export default class KeysRevoke extends GwCommand {
  static override description = "Revoke an API key by its visible prefix (as `gw keys list` shows it) or id.";
  static override examples = ["<%= config.bin %> keys revoke gw_3fK9aB2c"];
  static override args = { prefix: Args.string({ description: "key prefix or id", required: true }) };
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, ...remoteAdminFlags };

  async run() {
    const { args, flags } = await this.parse(KeysRevoke);
    const admin = remoteAdmin(flags);
    if (admin) {
      const key = await remotely(() => admin.revokeKey(args.prefix));
      const view = { id: key.id, prefix: key.prefix, agent: key.agent, createdAt: key.createdAt, revokedAt: key.revokedAt };
      return this.shown(view, () => printLine(`revoked key ${key.prefix}… of agent "${key.agent}"`));
    }
    const paths = await openHome(flags.home);
    const { agent, key } = await withMetadata(paths, async (store) => {
      const revoked = await revokeKey(store, args.prefix);
      return { key: revoked, agent: store.data.agents.find((candidate) => candidate.id === revoked.agentId)?.name ?? revoked.agentId };
    });
    const view = { id: key.id, prefix: key.prefix, agent, createdAt: key.createdAt, revokedAt: key.revokedAt };
    return this.shown(view, () => {
      printLine(`revoked key ${key.prefix}… of agent "${agent}"`);
    });
  }
}
