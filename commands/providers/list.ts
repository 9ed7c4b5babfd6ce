import { type ProviderView, providerView } from "../../src/admin/config-edits/providers.js";
import { isRecord } from "../../src/admin/config-edits/raw-config.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { loadHomeConfig, readHomeRawConfig } from "../../src/cli/home-config.js";
import { printTable } from "../../src/cli/output.js";
import { listedProviderView } from "../../src/cli/provider-entries.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";

export default class ProvidersList extends GwCommand {
  static override description =
    "List providers. API keys show as written when they are ${ENV} references, otherwise as ****. With --url, a gateway's providers show every key as ****: it runs them with the references resolved.";
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, ...remoteAdminFlags };

  async run() {
    const { flags } = await this.parse(ProvidersList);
    const admin = remoteAdmin(flags);
    const views = admin ? (await remotely(() => admin.providers())).map(listedProviderView) : await localProviders(flags.home);
    return this.shown(views, () => {
      printTable(
        ["NAME", "TYPE", "BASE URL", "API KEY", "HEADERS"],
        views.map((view) => [view.name, view.type, view.baseUrl, view.apiKey, Object.keys(view.headers ?? {}).join(",")]),
        "no providers (add one with `gw providers add NAME --type openai ...`)",
      );
    });
  }
}

async function localProviders(home: string | undefined): Promise<ProviderView[]> {
  const paths = await openHome(home);
  await loadHomeConfig(paths);
  // The raw file, not the loaded config: env references are shown as written, never their values.
  const providers = (await readHomeRawConfig(paths)).providers;
  return Object.entries(isRecord(providers) ? providers : {}).map(([name, entry]) => providerView(name, entry));
}
