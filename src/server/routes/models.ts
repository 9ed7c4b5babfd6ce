// GET /v1/models: what the caller's key can use (its plan decides which routes it reaches, its own
// model patterns which of those it may call).
import type { H3 } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import { listModels } from "../../gateway/models/model-list.js";
import { admitCaller } from "../request-context.js";

export function registerModels(app: H3, gateway: Gateway): void {
  app.get("/v1/models", async (event) => {
    const { caller, plan } = await admitCaller(event, gateway);
    return listModels(gateway.config, plan.limits, caller.key);
  });
}
