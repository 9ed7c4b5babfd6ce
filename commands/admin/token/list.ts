import { Flags } from "@oclif/core";
import { jsonFlag } from "../../../src/cli/flags.js";
import { GwCommand } from "../../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../../src/cli/home.js";
import { printTable } from "../../../src/cli/output.js";
import { adminTokensOf } from "../../../src/store/admin-tokens.js";

export default class AdminTokenList extends GwCommand {
  static override description = "List admin tokens by name and visible prefix (tokens and their hashes are never shown).";
  static override enableJsonFlag = true;
  static override flags = {
    revoked: Flags.boolean({ description: "include revoked tokens", default: false }),
    json: jsonFlag,
  };

  async run() {
    const { flags } = await this.parse(AdminTokenList);
    const paths = await openHome(flags.home);
    const now = Date.now();
    const tokens = await withMetadata(paths, async (store) =>
      adminTokensOf(store.data)
        .filter((record) => flags.revoked || flags.json || record.revokedAt === null)
        .map(({ id, name, prefix, readOnly, createdAt, expiresAt, revokedAt }) => ({
          id,
          name,
          prefix,
          readOnly,
          createdAt,
          expiresAt: expiresAt ?? null,
          expired: expiresAt !== undefined && Date.parse(expiresAt) <= now,
          revokedAt,
        })),
    );
    return this.shown(tokens, () =>
      printTable(
        ["NAME", "PREFIX", "ACCESS", "CREATED", "EXPIRES", ...(flags.revoked ? ["REVOKED"] : [])],
        tokens.map((token) => [
          token.name,
          token.prefix,
          token.readOnly ? "read-only" : "read-write",
          token.createdAt,
          token.expiresAt ? `${token.expiresAt}${token.expired ? " (expired)" : ""}` : "never",
          ...(flags.revoked ? [token.revokedAt ?? "-"] : []),
        ]),
        "no admin tokens (the admin API and console are off; create one with `gw admin token create --name NAME`)",
      ),
    );
  }
}
