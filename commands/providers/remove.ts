import { Args } from "@oclif/core";
import { type ProviderView, providerView, removeProvider } from "../../src/admin/config-edits/providers.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { listedProviderView } from "../../src/cli/provider-entries.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";

export default class ProvidersRemove extends GwCommand {
  static override description = "Remove a provider from config.json; refused while a route sends traffic to it.";
  static override args = { name: Args.string({ description: "provider name", required: true }) };
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, ...remoteAdminFlags };

  async run() {
    const { args, flags } = await this.parse(ProvidersRemove);
    const admin = remoteAdmin(flags);
    const removed = admin ? listedProviderView(await remotely(() => admin.removeProvider(args.name))) : await removeLocally(args.name, flags.home);
    return this.shown(removed, () => {
      printLine(`removed provider "${args.name}"`);
    });
  }
}

async function removeLocally(name: string, home: string | undefined): Promise<ProviderView> {
  const paths = await openHome(home);
  const { result: entry } = await editHomeConfig(paths, (raw) => removeProvider(raw, name));
  return providerView(name, entry);
}
