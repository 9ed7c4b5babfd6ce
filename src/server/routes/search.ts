// POST /v1/search (Bearer key, per-key rate limit): answers the search envelope
// `{success, data: {query, provider, results}}`; errors in the gateway envelope, 503
// `search_not_configured` on a gateway with no search provider.
import type { H3 } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import { parseSearchRequest } from "../../gateway/search/search-service.js";
import { readJsonObject } from "../read-json-body.js";
import type { RequestCharges } from "../request-charges.js";
import { toolCallContext } from "./tool-call-context.js";

export const SEARCH_PATHS = ["/v1/search"];

export function registerSearch(app: H3, gateway: Gateway, charges: RequestCharges): void {
  app.post(
    "/v1/search",
    charges.counted(async (event) => {
      const context = await toolCallContext(event, gateway);
      const body = parseSearchRequest(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
      const answer = await gateway.search.search(body, context);
      if (answer.upstreamRequestId) event.res.headers.set("x-service-upstream-trace-id", answer.upstreamRequestId);
      return answer.body;
    }),
  );
}
