// GET /v1/models: what the caller's key can use (its plan decides which routes it reaches).
import type { H3 } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import { listModels } from "../../gateway/models/model-list.js";
import { authenticateBearer } from "../request-context.js";

export function registerModels(app: H3, gateway: Gateway): void {
  app.get("/v1/models", async (event) => {
    const caller = await authenticateBearer(event, gateway);
    return listModels(gateway.config, gateway.planOf(caller).limits);
  });
}
