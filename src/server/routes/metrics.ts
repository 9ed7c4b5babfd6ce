// GET /metrics: the Prometheus text exposition (metrics.ts), for a client on loopback or one
// presenting server.metricsToken (metrics-access.ts); anyone else gets 401 or 403.
import { type H3, HTTPResponse } from "h3";
import { MetricsLoopbackOnlyError, MetricsTokenRequiredError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import type { ServerMetrics } from "../metrics.js";
import { isLoopbackAddress, metricsAccess } from "../metrics-access.js";
import { nodeRequestOf } from "../request-context.js";

export const METRICS_PATH = "/metrics";

export interface MetricsEndpoint {
  metrics: ServerMetrics;
  /** Test seam: every client counts as remote (a test cannot connect from an address other than loopback). */
  treatPeersAsRemote?: boolean;
}

export function registerMetrics(app: H3, gateway: Gateway, endpoint: MetricsEndpoint): void {
  app.get(METRICS_PATH, async (event) => {
    const loopback = !endpoint.treatPeersAsRemote && isLoopbackAddress(nodeRequestOf(event)?.socket.remoteAddress);
    const access = metricsAccess(loopback, gateway.config.server.metricsToken, event.req.headers.get("authorization"));
    if (access === "loopback_only") throw new MetricsLoopbackOnlyError();
    if (access === "token_required") throw new MetricsTokenRequiredError();
    const scrape = await endpoint.metrics.scrape();
    return new HTTPResponse(scrape.body, { headers: { "content-type": scrape.contentType, "cache-control": "no-store" } });
  });
}
