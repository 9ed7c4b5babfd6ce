// `gw models`: GET /v1/models and its table, shared by the oclif command (commands/models.ts) and
// the start-up fast path (fast-path.ts), so that both list and draw alike.
import type { ModelEntry, ModelList } from "../client/api-types.js";
import { GwApiError } from "../client/gw-api-error.js";
import type { GwClient } from "../client/gw-client.js";
import { isObject } from "../json/json-values.js";
import type { CommandOutcome } from "./command-outcome.js";
import { gatewayClient, homeRawConfig, homeServerUrl } from "./gateway-client.js";
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
      const { headers, rows } = modelTable(body, await autoModel(client), homeDefaultPriced(flags.home, client.transport.baseUrl));
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
 * config may differ. A model is default-priced when models[] gives it no `pricing` (priceOf in
 * config/default-pricing.ts, which the gateway bills by). Read from the raw JSON, as homeServerUrl
 * reads the address (gateway-client.ts homeRawConfig): validating the whole config would load its schema (zod), most of this
 * command's start. A config that is not a JSON object: no marker (`gw doctor` says what is wrong).
 */
function homeDefaultPriced(homeFlag: string | undefined, baseUrl: string): DefaultPriced | undefined {
  if (new URL(baseUrl).origin !== new URL(homeServerUrl(homeFlag)).origin) return undefined;
  const raw = homeRawConfig(homeFlag);
  if (!isObject(raw)) return undefined;
  const models = Array.isArray(raw.models) ? raw.models : [];
  const priced = new Set(
    models.filter((model) => isObject(model) && isObject(model.pricing) && typeof model.id === "string").map((model) => model.id as string),
  );
  return (modelId) => !priced.has(modelId);
}
