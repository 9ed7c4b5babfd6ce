// Which routes can serve a model id, read from the config alone: what GET /v1/models lists for a
// key, and what `gw doctor` / `gw models` call routable. It matches the way
// gateway/routing/route-resolver.ts does (kept here so the CLI can ask without the gateway):
// a prefix route serves ids that start with its prefix (and are longer, unless the route pins a
// `model`); an `auto` route's upstreams are the ids `<provider>/<model>` it answers with.
import { isProviderRoute, type PlanLimits, type ProviderRoute, type RouteConfig } from "./config-schema.js";
import type { Config } from "./resolved-config.js";

type RoutingConfig = Pick<Config, "routes" | "providers">;

/** The routes that serve `modelId`; none for `auto` itself, which is not a model. */
export function routesServing(config: RoutingConfig, modelId: string): RouteConfig[] {
  if (modelId === "auto") return [];
  const configured = (provider: string | undefined) => provider !== undefined && Object.hasOwn(config.providers, provider);
  return config.routes.filter((route) =>
    route.prefix === "auto"
      ? (route.upstreams ?? []).some((upstream) => configured(upstream.provider) && autoModelId(upstream) === modelId)
      : configured(route.provider) && modelId.startsWith(route.prefix) && (route.model !== undefined || modelId.length > route.prefix.length),
  );
}

/**
 * Whether a key on `plan` can ask for `modelId` by name: a prefix route serves it (a free-tier one
 * for free plans). A model an `auto` route answers with is not enough: asking for it by name would
 * be 404, or 403 for a free key, so it is reached through `auto` and listed only with a prefix route.
 */
export function modelReachable(config: RoutingConfig, modelId: string, plan: Pick<PlanLimits, "freeTierOnly">): boolean {
  const routes = routesServing(config, modelId).filter((route) => route.prefix !== "auto");
  return plan.freeTierOnly ? routes.some((route) => route.freeTier) : routes.length > 0;
}

/** The model ids `auto` routes answer with, as the response's `model` names them. */
export function autoUpstreamModelIds(config: RoutingConfig): string[] {
  const ids = config.routes.filter((route) => route.prefix === "auto").flatMap((route) => (route.upstreams ?? []).map(autoModelId));
  return [...new Set(ids)];
}

/** Prefix routes: they also serve model ids that have no models[] entry. */
export function prefixRoutes(config: RoutingConfig): ProviderRoute[] {
  return config.routes.filter((route): route is ProviderRoute => route.prefix !== "auto" && isProviderRoute(route));
}

function autoModelId(upstream: { provider: string; model: string }): string {
  return `${upstream.provider}/${upstream.model}`;
}
