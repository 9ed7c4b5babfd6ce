// /admin/v1/…: the admin API (docs/decisions.md §25). Every call is admitted by an admin token
// (server/admin/admin-access.ts) and written to the audit log (server/admin/admin-audit.ts); the
// API is off (404, nothing audited) until a token exists. A path under /admin that names no
// route is the unknown path's 404, as it is while the API is off.
import type { H3 } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import { adminOf, admitAdmin, requireAdminOn } from "../admin/admin-access.js";
import { auditAdminCall } from "../admin/admin-audit.js";
import { registerAdminConfig } from "../admin/admin-config.js";
import { registerAdminJobs } from "../admin/admin-jobs.js";
import { registerAdminKeys } from "../admin/admin-keys.js";
import { guardedRoutes } from "../admin/admin-routes.js";
import { registerAdminUsage } from "../admin/admin-usage.js";
import { registerAdminViews } from "../admin/admin-views.js";
import type { ProviderHealth } from "../admin/provider-health.js";
import type { ServerLogger } from "../server-logger.js";

export const ADMIN_PREFIX = "/admin/";

export interface AdminEndpoint {
  health: ProviderHealth;
  /** Test seam: the address every client is seen at. */
  peerAddress?: string;
}

export function registerAdmin(app: H3, gateway: Gateway, logger: ServerLogger, endpoint: AdminEndpoint): void {
  const routes = guardedRoutes(app, async (event) => {
    await requireAdminOn(event, gateway);
    // From here every call is audited, refusals included (who tried, from where).
    auditAdminCall(event, gateway, logger);
    admitAdmin(event, gateway, endpoint.peerAddress);
  });
  routes.get("/admin/v1/me", (event) => {
    const { id, name, prefix, readOnly, createdAt, expiresAt } = adminOf(event).token;
    return { object: "admin_token", id, name, prefix, readOnly, createdAt, expiresAt: expiresAt ?? null };
  });
  // Loaded when asked for: building it costs the start of every server that never serves it.
  routes.get("/admin/v1/openapi.json", async () => (await import("../admin/admin-openapi.js")).adminOpenApi);
  registerAdminKeys(routes, gateway);
  registerAdminViews(routes, gateway, endpoint.health);
  registerAdminConfig(routes, gateway);
  registerAdminJobs(routes, gateway);
  registerAdminUsage(routes, gateway, logger);
}
