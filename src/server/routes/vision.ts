// The picture-reading endpoints (Bearer key, per-key rate limit, gateway error envelope):
// POST /v1/image/describe answers `{model, text}`; the earlier-form aliases keep their shapes,
// POST /v1/vision/describe `{success, result: {text}}` and POST /v1/vision/ocr
// `{success, tool, result: {blocks, fullText}}` (docs/decisions.md §5).
import type { H3, H3Event } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import type { VisionCallContext } from "../../gateway/vision/describe-service.js";
import { parseDescribeRequest, parseOcrRequest } from "../../gateway/vision/vision-request.js";
import { readJsonObject } from "../read-json-body.js";
import type { RequestCharges } from "../request-charges.js";
import { admitCaller, headerTagsOf, requestIdOf } from "../request-context.js";

export function registerVision(app: H3, gateway: Gateway, charges: RequestCharges): void {
  app.post(
    "/v1/image/describe",
    charges.counted(async (event) => {
      const { context, json } = await visionCall(event, gateway, "image.describe");
      return gateway.describer.describe(parseDescribeRequest(json), context);
    }),
  );

  app.post(
    "/v1/vision/describe",
    charges.counted(async (event) => {
      const { context, json } = await visionCall(event, gateway, "vision.describe");
      const described = await gateway.describer.describe(parseDescribeRequest(json), context);
      return { success: true, result: { text: described.text } };
    }),
  );

  app.post(
    "/v1/vision/ocr",
    charges.counted(async (event) => {
      const { context, json } = await visionCall(event, gateway, "vision.ocr");
      const recognised = await gateway.ocr.recognize(parseOcrRequest(json), context);
      return { success: true, tool: recognised.model, result: { blocks: recognised.blocks, fullText: recognised.fullText } };
    }),
  );
}

/** Authenticate, count against the rate limit, read the tags and the JSON body. */
async function visionCall(event: H3Event, gateway: Gateway, endpoint: string): Promise<{ context: VisionCallContext; json: Record<string, unknown> }> {
  const requestId = requestIdOf(event);
  const { caller, plan } = await admitCaller(event, gateway);
  const tags = headerTagsOf(event);
  const json = await readJsonObject(event, gateway.config.server.maxJsonBodyBytes);
  return { context: { caller, plan: plan.limits, requestId, signal: event.req.signal, endpoint, ...(tags ? { tags } : {}) }, json };
}
