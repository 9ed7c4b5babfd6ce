// Which upstreams may serve a requested model, in the order to try them: routes matched by
// prefix, highest priority first (then longest prefix); `auto` picks among its upstreams by
// weight (or, for low-latency plans, the fastest recently). Plan gates apply here.

import { isProviderRoute, isUpstreamsRoute, type PlanLimits, type ProviderRoute, type RouteConfig, type UpstreamsRoute } from "../../config/config-schema.js";
import type { Config } from "../../config/resolved-config.js";
import { ModelNotFoundError, ModelRequiresUpgradeError } from "../errors.js";
import type { LatencyTracker } from "./latency-tracker.js";

export interface RouteCandidate {
  provider: string;
  /** Model id sent upstream. */
  upstreamModel: string;
  /** Model id the client sees in the response (the concrete model for `auto`). */
  publicModel: string;
}

export interface ResolveOptions {
  planName: string;
  plan: PlanLimits;
  latency?: LatencyTracker;
  random?: () => number;
}

export function resolveRoutes(config: Pick<Config, "routes">, model: string, options: ResolveOptions): RouteCandidate[] {
  return model === "auto" ? resolveAuto(config.routes, options) : resolvePrefixed(config.routes, model, options);
}

function resolvePrefixed(routes: RouteConfig[], model: string, options: ResolveOptions): RouteCandidate[] {
  const matching = routes
    .filter((route): route is ProviderRoute => route.prefix !== "auto" && isProviderRoute(route) && model.startsWith(route.prefix))
    .filter((route) => route.model || model.length > route.prefix.length)
    .sort((a, b) => b.priority - a.priority || b.prefix.length - a.prefix.length);
  if (matching.length === 0) throw new ModelNotFoundError(model);
  const allowed = options.plan.freeTierOnly ? matching.filter((route) => route.freeTier) : matching;
  if (allowed.length === 0) throw new ModelRequiresUpgradeError(model, options.planName);
  const candidates = allowed.map((route) => ({
    provider: route.provider,
    upstreamModel: route.model ?? model.slice(route.prefix.length),
    publicModel: model,
    priority: route.priority,
  }));
  if (options.plan.lowLatencyRouting && options.latency) {
    const latency = options.latency;
    candidates.sort((a, b) => b.priority - a.priority || latency.estimate(a.provider, a.upstreamModel) - latency.estimate(b.provider, b.upstreamModel));
  }
  return candidates.map(({ priority: _priority, ...candidate }) => candidate);
}

function resolveAuto(routes: RouteConfig[], options: ResolveOptions): RouteCandidate[] {
  const autoRoutes = routes
    .filter((route): route is UpstreamsRoute => route.prefix === "auto" && isUpstreamsRoute(route))
    .sort((a, b) => b.priority - a.priority);
  if (autoRoutes.length === 0) throw new ModelNotFoundError("auto");
  const allowed = options.plan.freeTierOnly ? autoRoutes.filter((route) => route.freeTier) : autoRoutes;
  if (allowed.length === 0) throw new ModelRequiresUpgradeError("auto", options.planName);
  const candidates: RouteCandidate[] = [];
  const latency = options.plan.lowLatencyRouting ? options.latency : undefined;
  for (const route of allowed) {
    const upstreams = [...route.upstreams];
    const ordered = latency
      ? upstreams.sort((a, b) => latency.estimate(a.provider, a.model) - latency.estimate(b.provider, b.model))
      : weightedOrder(upstreams, options.random ?? Math.random);
    for (const upstream of ordered) {
      candidates.push({ provider: upstream.provider, upstreamModel: upstream.model, publicModel: `${upstream.provider}/${upstream.model}` });
    }
  }
  return candidates;
}

/** First element drawn with probability proportional to weight; the rest follow by weight. */
export function weightedOrder<T extends { weight: number }>(items: T[], random: () => number): T[] {
  const total = items.reduce((sum, item) => sum + item.weight, 0);
  let point = random() * total;
  let chosenIndex = items.length - 1;
  for (let index = 0; index < items.length; index += 1) {
    point -= items[index]!.weight;
    if (point < 0) {
      chosenIndex = index;
      break;
    }
  }
  const rest = items.filter((_, index) => index !== chosenIndex).sort((a, b) => b.weight - a.weight);
  return [items[chosenIndex]!, ...rest];
}
