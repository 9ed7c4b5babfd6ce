// The admin API's read-only views of the running gateway (docs/decisions.md §25): the calling
// token, plans, routes, providers with their secrets masked, each provider's health on this
// instance, and the audit log.

import { planListings } from "../../admin/plan-listing.js";
import { maskSecret } from "../../config/config-file.js";
import type { Gateway } from "../../gateway/gateway.js";
import { listLimit } from "./admin-lists.js";
import type { AdminRoutes } from "./admin-routes.js";
import type { ProviderHealth } from "./provider-health.js";

export function registerAdminViews(app: AdminRoutes, gateway: Gateway, health: ProviderHealth): void {
  app.get("/admin/v1/plans", () => ({ object: "list", data: planListings(gateway.config) }));

  app.get("/admin/v1/routes", () => ({ object: "list", data: gateway.config.routes }));

  app.get("/admin/v1/providers", () => {
    const data = Object.entries(gateway.config.providers).map(([name, provider]) => ({
      name,
      type: provider.type,
      baseUrl: provider.baseUrl ?? null,
      // The loaded config has `${ENV}` references resolved: a set secret shows as ****, never its value.
      apiKey: maskSecret(provider.apiKey) ?? null,
      headers: Object.fromEntries(Object.entries(provider.headers ?? {}).map(([header, value]) => [header, maskSecret(value) ?? ""])),
      responsesApi: provider.responsesApi ?? false,
    }));
    return { object: "list", data };
  });

  app.get("/admin/v1/providers/health", () => {
    const data = Object.keys(gateway.config.providers).map((name) => ({ name, breaker: gateway.breakers.state(name), ...health.figures(name) }));
    return { object: "list", data };
  });

  app.get("/admin/v1/audit", async (event) => ({ object: "list", data: await gateway.state.audit.recent(listLimit(event)) }));
}
