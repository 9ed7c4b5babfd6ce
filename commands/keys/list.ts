import { Flags } from "@oclif/core";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { keysList } from "../../src/cli/keys-list.js";
import { remoteAdminFlags } from "../../src/cli/remote-admin.js";

// The work is in src/cli/keys-list.ts, shared with the start-up fast path (src/cli/fast-path.ts):
// a flag added here goes in its table there too (test/cli-fast-path.test.ts checks).
export default class KeysList extends GwCommand {
  static override description =
    "List API keys by visible prefix (keys and their hashes are never shown): label, agent, plan, the key's own limits (requests and tokens per minute, model patterns, budget; - where it has none and only its plan's apply), how long the response cache keeps its answers (when any key listed has a cache lifetime), credits spent in the budget's period (this month unless the budget is a lifetime one), expiry and last use.";
  static override enableJsonFlag = true;
  static override flags = {
    agent: Flags.string({ description: "only this agent's keys" }),
    revoked: Flags.boolean({ description: "include revoked keys", default: false }),
    json: jsonFlag,
    ...remoteAdminFlags,
  };

  async run() {
    const { flags } = await this.parse(KeysList);
    const { result, view } = await keysList(flags);
    return this.shown(result, view);
  }
}
