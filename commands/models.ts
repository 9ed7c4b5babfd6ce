import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../src/cli/flags.js";
import { gatewayClient, homeServerUrl } from "../src/cli/gateway-client.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { modelTable } from "../src/cli/model-table.js";
import { printTable } from "../src/cli/output.js";
import type { ModelEntry } from "../src/client/api-types.js";
import { GwApiError } from "../src/client/gw-api-error.js";
import type { GwClient } from "../src/client/gw-client.js";
import { loadConfigFile } from "../src/config/load-config.js";
import { homePaths, resolveHome } from "../src/config/paths.js";
import type { Config } from "../src/config/resolved-config.js";

export default class Models extends GwCommand {
  static override description =
    "List what your key can call (GET /v1/models): the models routes serve, with their price per million input/output tokens; `auto` when your key may use it; and `PREFIX*` for a route that passes any model id after its prefix to its provider (no models entry describes them; `gw models add` writes one). Against the home's own server, `default $1/$3` marks models billed at billing.defaultChatPricing for lack of a price of their own.";
  static override examples = ["<%= config.bin %> models", "<%= config.bin %> models --json | jq -r '.data[].id'"];
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run() {
    const { flags } = await this.parse(Models);
    const client = gatewayClient(flags);
    const body = await client.listModels();
    return this.shown(body, async () => {
      const { headers, rows } = modelTable(body, await autoModel(client), homeConfigOf(flags.home, client.transport.baseUrl));
      printTable(headers, rows, "no models");
    });
  }
}

/** `auto` as GET /v1/models/auto describes it, when the key may use it (404 otherwise, also from a gateway that has no such path). */
async function autoModel(client: GwClient): Promise<ModelEntry | undefined> {
  try {
    return await client.retrieveModel("auto");
  } catch (error) {
    if (error instanceof GwApiError && error.status === 404) return undefined;
    throw error;
  }
}

/**
 * The home's config when the gateway called is the home's own server: whether a price is the
 * default one is not part of the API body, and another server's config may differ.
 */
function homeConfigOf(homeFlag: string | undefined, baseUrl: string): Config | undefined {
  if (new URL(baseUrl).origin !== new URL(homeServerUrl(homeFlag)).origin) return undefined;
  try {
    return loadConfigFile(homePaths(resolveHome(homeFlag)).config);
  } catch {
    return undefined; // no or broken config: list without the marker (`gw doctor` says what is wrong)
  }
}
