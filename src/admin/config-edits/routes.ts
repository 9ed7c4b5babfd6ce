// Routes as `gw routes` and /admin/v1/routes add, change and remove them (docs/decisions.md §25):
// a route that would duplicate another is refused; one is changed or removed by its position,
// which the CLI finds from a prefix and what tells routes sharing it apart (cli/route-entries.ts).
import type { RawConfig } from "../../config/config-file.js";
import { AdminInputError } from "../admin-requests.js";
import { conflict, notFound } from "./config-edit-refusal.js";
import { arrayAt, isRecord, malformed, stringField } from "./raw-config.js";

export interface UpstreamSpec {
  provider: string;
  model: string;
  weight?: number;
}

/** A route as `gw routes add` and POST /admin/v1/routes give it: to one provider, or among weighted upstreams. */
export interface NewRoute {
  prefix: string;
  provider?: string;
  upstreams?: UpstreamSpec[];
  model?: string;
  priority?: number;
  freeTier?: boolean;
}

/** What `gw routes set` changes; a `model` of "" stops sending a model of the route's own. */
export interface RouteChanges {
  priority?: number;
  freeTier?: boolean;
  model?: string;
}

/** A route with weighted `upstreams` (such as auto) rather than one provider. */
export function isWeighted(route: unknown): route is Record<string, unknown> & { upstreams: unknown[] } {
  return isRecord(route) && Array.isArray(route.upstreams);
}

/** An existing route the new one would duplicate: the same prefix and provider, or both weighted. */
export function duplicateRoute(routes: readonly unknown[], added: { prefix: string; provider?: string }): number {
  return routes.findIndex((route) => {
    if (stringField(route, "prefix") !== added.prefix) return false;
    return added.provider === undefined ? isWeighted(route) : stringField(route, "provider") === added.provider;
  });
}

/** Why a duplicate is refused, and the two ways on. */
export function duplicateRouteMessage(routes: readonly unknown[], index: number, prefix: string): string {
  const route = routes[index];
  const existing = `routes[${index}] already sends "${prefix}" to ${isWeighted(route) ? `weighted upstreams (${rawRouteTarget(route)})` : rawRouteTarget(route)}`;
  if (isWeighted(route)) return `${existing}; pass --replace to replace it with this one, or change its priority or free tier with \`gw routes set ${prefix}\``;
  return `${existing}; change it with \`gw routes set ${prefix} --provider ${rawRouteTarget(route)} [--priority N] [--free-tier|--no-free-tier] [--model M]\`, or pass --replace to replace it`;
}

/**
 * Inside a config edit: add a route, or with `replace` put it in the place of the one it would
 * duplicate. Returns its position and whether it replaced one.
 */
export function addRoute(raw: RawConfig, route: NewRoute, replace: boolean): { index: number; replaced: boolean } {
  if ((route.provider === undefined) === (route.upstreams === undefined))
    throw new AdminInputError("provider", "give a provider, or weighted upstreams (provider:model[:weight]), not both");
  // The router serves `auto` from weighted routes only: a provider route named auto would never be used.
  if (route.prefix === "auto" && route.provider !== undefined)
    throw new AdminInputError("provider", "the auto route picks among weighted upstreams: give upstreams (provider:model[:weight]) instead of a provider");
  if (route.upstreams !== undefined && route.model !== undefined)
    throw new AdminInputError("model", "a weighted route's upstreams name their models: give model with a provider only");
  const entry: Record<string, unknown> = { prefix: route.prefix };
  if (route.provider !== undefined) entry.provider = route.provider;
  if (route.upstreams !== undefined) entry.upstreams = route.upstreams.map((upstream) => ({ ...upstream }));
  if (route.model !== undefined) entry.model = route.model;
  if (route.priority !== undefined) entry.priority = route.priority;
  if (route.freeTier) entry.freeTier = true;
  const routes = arrayAt(raw, "routes");
  const duplicate = duplicateRoute(routes, { prefix: route.prefix, provider: route.provider });
  if (duplicate < 0) return { index: routes.push(entry) - 1, replaced: false };
  if (!replace) throw conflict(duplicateRouteMessage(routes, duplicate, route.prefix));
  routes[duplicate] = entry;
  return { index: duplicate, replaced: true };
}

/** Inside a config edit: change only the given fields of routes[INDEX] (checked against `prefix` when given). */
export function changeRoute(raw: RawConfig, index: number, changes: RouteChanges, prefix?: string): Record<string, unknown> {
  const route = routeAt(arrayAt(raw, "routes"), index, prefix);
  if (changes.model !== undefined && isWeighted(route)) {
    throw new AdminInputError(
      "model",
      `routes[${index}] ("${stringField(route, "prefix")}") is weighted: each upstream names its model; change them with \`gw routes add ${stringField(route, "prefix")} --replace --upstream provider:model[:weight] ...\``,
    );
  }
  if (changes.priority !== undefined) route.priority = changes.priority;
  if (changes.freeTier !== undefined) route.freeTier = changes.freeTier;
  if (changes.model === "") delete route.model;
  else if (changes.model !== undefined) route.model = changes.model;
  return route;
}

/** Inside a config edit: remove routes[INDEX] (checked against `prefix` when given). Returns the route as it was written. */
export function removeRoute(raw: RawConfig, index: number, prefix?: string): Record<string, unknown> {
  const routes = arrayAt(raw, "routes");
  const route = routeAt(routes, index, prefix);
  routes.splice(index, 1);
  return route;
}

/**
 * routes[INDEX]. A caller that found the position from a listing names the prefix it saw there:
 * when the routes changed meanwhile, the change is refused rather than made to another route.
 */
function routeAt(routes: unknown[], index: number, prefix: string | undefined): Record<string, unknown> {
  const route = routes[index];
  if (route === undefined)
    throw notFound(`no routes[${index}]: there ${routes.length === 1 ? "is 1 route" : `are ${routes.length} routes`} (\`gw routes list\` shows them)`);
  if (!isRecord(route)) throw malformed(`routes[${index}]`, "an object");
  const found = stringField(route, "prefix");
  if (prefix !== undefined && found !== prefix)
    throw conflict(`routes[${index}] now has prefix "${found}", not "${prefix}": the routes changed meanwhile; list them again`);
  return route;
}

/** A route as written in the config: its provider, or its weighted upstreams as provider:model:weight (weights default to 1). */
export function rawRouteTarget(route: unknown): string {
  if (!isWeighted(route)) return stringField(route, "provider") ?? "?";
  return route.upstreams
    .map((upstream) => {
      const weight = isRecord(upstream) && typeof upstream.weight === "number" ? upstream.weight : 1;
      return `${stringField(upstream, "provider") ?? "?"}:${stringField(upstream, "model") ?? "?"}:${weight}`;
    })
    .join(", ");
}
