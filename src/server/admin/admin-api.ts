// The admin API's routes on an H3 app of their own, which routes/admin.ts loads on the first
// /admin request made while the API is on (docs/decisions.md §28). Every route is behind the same
// guard (admin-routes.ts); a path here that names no route is the unknown path's 404.
import { H3 } from "h3";
import { RouteNotFoundError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import type { AdminEndpoint } from "../routes/admin.js";
import type { ServerLogger } from "../server-logger.js";
import { adminOf, admitAdmin } from "./admin-access.js";
import { auditAdminCall } from "./admin-audit.js";
import { registerAdminConfig } from "./admin-config.js";
import { registerAdminJobs } from "./admin-jobs.js";
import { registerAdminKeys } from "./admin-keys.js";
import { guardedRoutes } from "./admin-routes.js";
import { registerAdminUsage } from "./admin-usage.js";
import { registerAdminViews } from "./admin-views.js";

export function adminApi(gateway: Gateway, logger: ServerLogger, endpoint: AdminEndpoint): H3 {
  const app = new H3();
  // Reached only through routes/admin.ts, which has already answered 404 while the API is off.
  const routes = guardedRoutes(app, async (event) => {
    // From here every call is audited, refusals included (who tried, from where).
    auditAdminCall(event, gateway, logger);
    admitAdmin(event, gateway, endpoint.peerAddress);
  });
  routes.get("/admin/v1/me", (event) => {
    const { id, name, prefix, readOnly, createdAt, expiresAt } = adminOf(event).token;
    return { object: "admin_token", id, name, prefix, readOnly, createdAt, expiresAt: expiresAt ?? null };
  });
  // Loaded when asked for: building it costs the start of every server that never serves it.
  routes.get("/admin/v1/openapi.json", async () => (await import("./admin-openapi.js")).adminOpenApi);
  registerAdminKeys(routes, gateway);
  registerAdminViews(routes, gateway, endpoint.health);
  registerAdminConfig(routes, gateway);
  registerAdminJobs(routes, gateway);
  registerAdminUsage(routes, gateway, logger);
  app.all("/**", (event) => {
    throw new RouteNotFoundError(`No endpoint at ${event.req.method} ${event.url.pathname}.`);
  });
  return app;
}
