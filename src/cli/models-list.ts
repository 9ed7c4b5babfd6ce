// `gw models`: GET /v1/models and its table, shared by the oclif command (commands/models.ts) and
// the start-up fast path (fast-path.ts), so that both list and draw alike.
import type { ModelEntry, ModelList } from "../client/api-types.js";
import { GwApiError } from "../client/gw-api-error.js";
import type { GwClient } from "../client/gw-client.js";
import { homePaths, resolveHome } from "../config/paths.js";
import type { CommandOutcome } from "./command-outcome.js";
import { gatewayClient, homeServerUrl } from "./gateway-client.js";
import { type DefaultPriced, modelTable } from "./model-table.js";
import { printTable } from "./output.js";

export interface ModelsListFlags {
  home?: string;
  "api-key"?: string;
  "base-url"?: string;
}

export async function modelsList(flags: ModelsListFlags): Promise<CommandOutcome<ModelList>> {
  const client = gatewayClient(flags);
  const body = await client.listModels();
  return {
    result: body,
    view: async () => {
      const { headers, rows } = modelTable(body, await autoModel(client), await homeDefaultPriced(flags.home, client.transport.baseUrl));
      printTable(headers, rows, "no models");
    },
  };
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
 * Which models the home's config bills at the default price, when the gateway called is the home's
 * own server: whether a price is the default one is not part of the API body, and another server's
 * config may differ.
 */
async function homeDefaultPriced(homeFlag: string | undefined, baseUrl: string): Promise<DefaultPriced | undefined> {
  if (new URL(baseUrl).origin !== new URL(homeServerUrl(homeFlag)).origin) return undefined;
  // Imported here: the config schema (zod) costs start-up time that a listing from another gateway does not need.
  const [{ loadConfigFile }, { priceOf }] = await Promise.all([import("../config/load-config.js"), import("../config/default-pricing.js")]);
  try {
    const config = loadConfigFile(homePaths(resolveHome(homeFlag)).config);
    return (modelId) => priceOf(config, modelId).isDefault;
  } catch {
    return undefined; // no or broken config: list without the marker (`gw doctor` says what is wrong)
  }
}
