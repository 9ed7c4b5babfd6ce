// GET /v1/models: what the caller's key can use (its plan decides which routes it reaches, its own
// model patterns which of those it may call). GET /v1/models/{id} (the OpenAI SDK's
// `models.retrieve`, which sends the id URL-encoded: `openai%2Fgpt-4o-mini`; curl users send the
// slash as it is) answers one of them, 404 `model_not_found` for any other id.
import type { H3 } from "h3";
import { ModelNotFoundError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { describeModel, listModels } from "../../gateway/models/model-list.js";
import { admitCaller } from "../request-context.js";

const MODELS_PATH = "/v1/models/";

export function registerModels(app: H3, gateway: Gateway): void {
  app.get("/v1/models", async (event) => {
    const { caller, plan } = await admitCaller(event, gateway);
    return listModels(gateway.config, plan.limits, caller.key);
  });

  app.get("/v1/models/**", async (event) => {
    const { caller, plan } = await admitCaller(event, gateway);
    const id = modelIdOf(event.url.pathname);
    const model = id === undefined ? undefined : describeModel(gateway.config, plan.limits, caller.key, id);
    if (!model) throw new ModelNotFoundError(id ?? "", notFoundMessage(id));
    return model;
  });
}

/** The id after /v1/models/, decoded once; undefined when it does not decode. */
function modelIdOf(pathname: string): string | undefined {
  try {
    return decodeURIComponent(pathname.slice(MODELS_PATH.length));
  } catch {
    return undefined;
  }
}

/** One answer for an id that does not exist and one this key may not use: it reveals nothing either way. */
function notFoundMessage(id: string | undefined): string {
  const shown = id === undefined ? "that" : `\`${id}\``;
  return `The model ${shown} does not exist or is not available to this key. GET /v1/models lists the models it can use.`;
}
