// The image endpoints: the public catalog and styles (no key), and POST /v1/image/generations
// (Bearer key, per-key rate limit). Errors render in the gateway envelope.
import type { H3 } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import { parseImageGeneration } from "../../gateway/images/image-request.js";
import { readJsonObject } from "../read-json-body.js";
import { authenticateBearer, requestIdOf } from "../request-context.js";

export const IMAGE_PATHS = ["/v1/public/image-models", "/v1/image/styles", "/v1/image/generations"];

export function registerImages(app: H3, gateway: Gateway): void {
  app.get("/v1/public/image-models", () => gateway.imageCatalog());

  app.get("/v1/image/styles", () => gateway.imageStyles());

  app.post("/v1/image/generations", async (event) => {
    const requestId = requestIdOf(event);
    const caller = await authenticateBearer(event, gateway);
    const plan = gateway.planOf(caller);
    gateway.takeRateLimit(caller, plan.limits);
    const body = parseImageGeneration(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
    const outcome = await gateway.images.generate(body, { caller, planName: plan.name, plan: plan.limits, requestId, signal: event.req.signal });
    if (outcome.upstreamRequestId) event.res.headers.set("x-service-upstream-trace-id", outcome.upstreamRequestId);
    if (outcome.assetWarning) event.res.headers.set("x-service-asset-warning", outcome.assetWarning);
    if (outcome.enhancedPromptHeader) event.res.headers.set("x-service-enhanced-prompt", outcome.enhancedPromptHeader);
    return outcome.body;
  });
}
