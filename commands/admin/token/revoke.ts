import { Args } from "@oclif/core";
import { jsonFlag } from "../../../src/cli/flags.js";
import { GwCommand } from "../../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../../src/cli/home.js";
import { note } from "../../../src/cli/output.js";
import { adminEnabled, revokeAdminToken } from "../../../src/store/admin-tokens.js";

export default class AdminTokenRevoke extends GwCommand {
  static override description =
    "Revoke an admin token by name, prefix or id; it stops working on every instance at once. With no live token left, the admin API and console are off.";
  static override enableJsonFlag = true;
  static override args = { token: Args.string({ description: "the token's name, visible prefix or id", required: true }) };
  static override flags = { json: jsonFlag };

  async run() {
    const { args, flags } = await this.parse(AdminTokenRevoke);
    const paths = await openHome(flags.home);
    const { record, stillOn } = await withMetadata(paths, async (store) => {
      const record = await revokeAdminToken(store, args.token);
      return { record, stillOn: adminEnabled(store.data, Date.now()) };
    });
    const shown = { name: record.name, prefix: record.prefix, revokedAt: record.revokedAt };
    return this.shown(shown, () => {
      note(`revoked admin token ${record.prefix}… "${record.name}"`);
      if (!stillOn) note("no live admin token is left: the admin API and console are off");
    });
  }
}
