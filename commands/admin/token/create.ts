import { Flags } from "@oclif/core";
import { jsonFlag } from "../../../src/cli/flags.js";
import { GwCommand } from "../../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../../src/cli/home.js";
import { parseExpiry } from "../../../src/cli/key-limit-flags.js";
import { note, printLine } from "../../../src/cli/output.js";
import { createAdminToken } from "../../../src/store/admin-tokens.js";

export default class AdminTokenCreate extends GwCommand {
  static override description =
    "Create an admin token for the admin API (/admin/v1) and the web console (/console). The token is shown once; only its hash is kept. The admin API and console are off until a token exists, and answer only on loopback unless admin.allowFrom says otherwise. An admin token never calls a model, and an API key never opens the admin API.";
  static override examples = [
    "export GW_ADMIN_TOKEN=$(<%= config.bin %> admin token create --name ops)",
    "<%= config.bin %> admin token create --name dashboard --read-only --expires 90d",
  ];
  static override enableJsonFlag = true;
  static override flags = {
    name: Flags.string({ description: "who or what holds it (shown in lists and in every audit line)", required: true }),
    "read-only": Flags.boolean({ description: "reads only: every change answers 403", default: false }),
    expires: Flags.string({
      description: "when it stops working: a lifetime (15m, 12h, 30d, 4w), a date (2027-01-31: through that day, UTC) or a time with its zone [default: never]",
    }),
    json: jsonFlag,
  };

  async run() {
    const { flags } = await this.parse(AdminTokenCreate);
    const paths = await openHome(flags.home, { create: true });
    const expiresAt = flags.expires === undefined ? undefined : parseExpiry(flags.expires, new Date());
    const { token, record } = await withMetadata(paths, (store) => createAdminToken(store, { name: flags.name, readOnly: flags["read-only"], expiresAt }));
    const shown = { token, name: record.name, prefix: record.prefix, readOnly: record.readOnly, expiresAt: record.expiresAt ?? null };
    return this.shown(shown, () => {
      printLine(token);
      note(`admin token ${record.prefix}… "${record.name}"${record.readOnly ? " (read-only)" : ""}; it is shown only this once`);
    });
  }
}
