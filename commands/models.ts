import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../src/cli/flags.js";
import { gatewayClient, homeServerUrl } from "../src/cli/gateway-client.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { printJson, printTable } from "../src/cli/output.js";
import { priceLabel } from "../src/config/default-pricing.js";
import { loadConfigFile } from "../src/config/load-config.js";
import { homePaths, resolveHome } from "../src/config/paths.js";
import type { Config } from "../src/config/resolved-config.js";

export default class Models extends GwCommand {
  static override description =
    "List the chat models your key can use (GET /v1/models). Against the home's own server the table adds each model's price per million input/output tokens, `default $1/$3` for models billed at billing.defaultChatPricing.";
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run(): Promise<void> {
    const { flags } = await this.parse(Models);
    const client = gatewayClient(flags);
    const body = await client.listModels();
    if (flags.json) return printJson(body);
    const prices = homeConfigOf(flags.home, client.transport.baseUrl);
    printTable(
      ["ID", "NAME", "CONTEXT", "MODALITIES", ...(prices ? ["PRICE"] : [])],
      body.data.map((model) => [
        model.id,
        model.name,
        model.context_length,
        model.architecture ? `${model.architecture.input_modalities.join(",")} -> ${model.architecture.output_modalities.join(",")}` : undefined,
        ...(prices ? [priceLabel(prices, model.id)] : []),
      ]),
      "no models",
    );
  }
}

/**
 * The home's config when the gateway called is the home's own server: prices are not part of the
 * API body, so they can only come from the config, and another server's config may differ.
 */
function homeConfigOf(homeFlag: string | undefined, baseUrl: string): Config | undefined {
  if (new URL(baseUrl).origin !== new URL(homeServerUrl(homeFlag)).origin) return undefined;
  try {
    return loadConfigFile(homePaths(resolveHome(homeFlag)).config);
  } catch {
    return undefined; // no or broken config: list without prices (`gw doctor` says what is wrong)
  }
}
