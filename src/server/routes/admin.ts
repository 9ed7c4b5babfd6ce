// /admin/v1/…: the admin API (docs/decisions.md §25). Every call is admitted by an admin token
// (server/admin/admin-access.ts) and written to the audit log (server/admin/admin-audit.ts); the
// API is off (404, nothing audited) until a token exists. A path under /admin that names no
// route is the unknown path's 404, as it is while the API is off. Its routes load on the first
// /admin request made while it is on (server/admin/admin-api.ts): a server whose API is never
// called never builds them (their request schemas cost ~5 MiB at start).
import type { H3 } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import { onFirstLoad } from "../../load/on-first-use.js";
import { requireAdminOn } from "../admin/admin-access.js";
import type { ProviderHealth } from "../admin/provider-health.js";
import type { ServerLogger } from "../server-logger.js";

export const ADMIN_PREFIX = "/admin/";

export interface AdminEndpoint {
  health: ProviderHealth;
  /** Test seam: the address every client is seen at. */
  peerAddress?: string;
}

export function registerAdmin(app: H3, gateway: Gateway, logger: ServerLogger, endpoint: AdminEndpoint): void {
  const adminApi = onFirstLoad(async () => (await import("../admin/admin-api.js")).adminApi(gateway, logger, endpoint));
  app.all("/admin/**", async (event) => {
    await requireAdminOn(event, gateway);
    return (await adminApi()).handler(event);
  });
}
