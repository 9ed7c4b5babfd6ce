import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { loadHomeConfig, readHomeRawConfig } from "../../src/cli/home-config.js";
import { printTable } from "../../src/cli/output.js";
import { providerView } from "../../src/cli/provider-entries.js";
import { isRecord } from "../../src/cli/raw-config.js";

export default class ProvidersList extends GwCommand {
  static override description = "List providers. API keys show as written when they are ${ENV} references, otherwise as ****.";
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag };

  async run() {
    const { flags } = await this.parse(ProvidersList);
    const paths = await openHome(flags.home);
    await loadHomeConfig(paths);
    // The raw file, not the loaded config: env references are shown as written, never their values.
    const providers = (await readHomeRawConfig(paths)).providers;
    const views = Object.entries(isRecord(providers) ? providers : {}).map(([name, entry]) => providerView(name, entry));
    return this.shown(views, () => {
      printTable(
        ["NAME", "TYPE", "BASE URL", "API KEY", "HEADERS"],
        views.map((view) => [view.name, view.type, view.baseUrl, view.apiKey, Object.keys(view.headers ?? {}).join(",")]),
        "no providers (add one with `gw providers add NAME --type openai ...`)",
      );
    });
  }
}
