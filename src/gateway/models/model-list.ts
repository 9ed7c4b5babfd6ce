// GET /v1/models and GET /v1/models/{id}: what the caller's key can call by name (docs/decisions.md
// §10, §18). An id is the key's when a route serves it (config/model-routes.ts), the key's plan
// may take that route (free plans only free-tier routes) and the key's own model patterns allow it.
// - `data` holds concrete models only, each in the spec's entry shape (never `auto`): the models[]
//   entries such a route serves. Beside it, `aliases` lists the named-upstream routes (a prefix
//   route that pins `model`: its prefix is an id) without an entry of their own, whose context
//   length nothing states, and `prefixes` the routes a key reaches that serve any id after their
//   prefix and have no models[] entry under it.
// - Retrieving answers every id the key can call, `auto` included; the rest is 404.
// Each model carries the price it is billed at (its own, else billing.defaultChatPricing) in
// OpenRouter's shape; `auto` carries none, its price being the upstream's it picks.
import type { ModelConfig, PlanLimits, RouteConfig } from "../../config/config-schema.js";
import { priceOf } from "../../config/default-pricing.js";
import { modelReachable } from "../../config/model-routes.js";
import type { Config } from "../../config/resolved-config.js";
import type { KeyRecord } from "../../store/records.js";
import { keyAllowsModel } from "../auth/key-limits.js";
import { type OpenRouterPricing, openRouterPricing } from "./openrouter-pricing.js";

/** What a model takes in or gives out (the config's modality list). */
export type Modality = ModelConfig["input_modalities"][number];

export interface ModelEntry {
  id: string;
  name: string;
  architecture: { input_modalities: string[]; output_modalities: string[] };
  /** null for an id without a models[] entry: nothing says how long its context is. */
  context_length: number | null;
  created: number;
  /** USD per token (OpenRouter's shape); absent for `auto`. */
  pricing?: OpenRouterPricing;
}

/** A prefix route without models[] entries: every id after the prefix goes to its provider, at the default price. */
export interface PrefixEntry {
  prefix: string;
  pricing: OpenRouterPricing;
}

/** A named-upstream route without a models[] entry: callable by its id, undescribed. */
export interface AliasEntry {
  id: string;
  pricing: OpenRouterPricing;
}

/** The GET /v1/models answer. */
export interface ModelList {
  object: "list";
  data: ModelEntry[];
  aliases: AliasEntry[];
  prefixes: PrefixEntry[];
}

type Plan = Pick<PlanLimits, "freeTierOnly">;
type Key = Pick<KeyRecord, "models">;

export function listModels(config: Config, plan: Plan, key: Key = {}): ModelList {
  const data: ModelEntry[] = [];
  const listed = new Set<string>();
  const add = (id: string) => {
    const entry = listed.has(id) ? undefined : describeModel(config, plan, key, id);
    if (entry) {
      data.push(entry);
      listed.add(id);
    }
  };
  for (const model of config.models) if (model.id !== "auto") add(model.id);
  const aliases: AliasEntry[] = [];
  for (const route of servingRoutes(config)) {
    if (route.model === undefined || listed.has(route.prefix)) continue;
    const entry = describeModel(config, plan, key, route.prefix);
    if (entry?.pricing) aliases.push({ id: entry.id, pricing: entry.pricing });
    listed.add(route.prefix);
  }
  return { object: "list", data, aliases, prefixes: barePrefixes(config, plan, key) };
}

/** The model as the list shows it, for any id the key can call by name (`auto` too); undefined otherwise. */
export function describeModel(config: Config, plan: Plan, key: Key, id: string): ModelEntry | undefined {
  if (!keyAllowsModel(key, id)) return undefined;
  if (id === "auto") return describeAuto(config, plan);
  if (!modelReachable(config, id, plan)) return undefined;
  const model = config.models.find((entry) => entry.id === id);
  const pricing = openRouterPricing(priceOf(config, id).pricing);
  if (!model) return { ...undescribed(config, id), pricing };
  return {
    id: model.id,
    name: model.name,
    architecture: { input_modalities: model.input_modalities, output_modalities: model.output_modalities },
    context_length: model.context_length,
    created: model.created ?? config.loadedAt,
    pricing,
  };
}

/** `auto` for a plan that reaches an auto route: named after the models it picks among, described as far as all of them are. */
function describeAuto(config: Config, plan: Plan): ModelEntry | undefined {
  const routes = config.routes.filter((route) => route.prefix === "auto" && (!plan.freeTierOnly || route.freeTier));
  const ids = [
    ...new Set(
      routes.flatMap((route) =>
        (route.upstreams ?? [])
          .filter((upstream) => Object.hasOwn(config.providers, upstream.provider))
          .map((upstream) => `${upstream.provider}/${upstream.model}`),
      ),
    ),
  ];
  if (ids.length === 0) return undefined;
  const entries = ids.map((id) => config.models.find((model) => model.id === id));
  const base = { ...undescribed(config, "auto"), name: `auto: ${ids.join(", ")}` };
  if (!entries.every((entry) => entry !== undefined)) return base;
  // A request to auto must suit whichever upstream it lands on: the smallest window, the modalities all share.
  const shared = (list: (model: ModelConfig) => string[]) => entries.map(list).reduce((common, next) => common.filter((item) => next.includes(item)));
  return {
    ...base,
    architecture: { input_modalities: shared((model) => model.input_modalities), output_modalities: shared((model) => model.output_modalities) },
    context_length: Math.min(...entries.map((model) => model.context_length)),
  };
}

/** An id no models[] entry describes: named by itself, text in and out as the config's default, no context length. */
function undescribed(config: Config, id: string): ModelEntry {
  return { id, name: id, architecture: { input_modalities: ["text"], output_modalities: ["text"] }, context_length: null, created: config.loadedAt };
}

/** Prefix routes whose provider is configured (auto routes are not prefixes). */
function servingRoutes(config: Config): RouteConfig[] {
  return config.routes.filter((route) => route.prefix !== "auto" && route.provider !== undefined && Object.hasOwn(config.providers, route.provider));
}

/**
 * Prefix routes the key reaches that pass any id on and have no models[] entry under them. A key
 * with model patterns sees one only when its patterns take the whole family (`prefix*`).
 */
function barePrefixes(config: Config, plan: Plan, key: Key): PrefixEntry[] {
  const pricing = openRouterPricing(config.billing.defaultChatPricing);
  const prefixes = servingRoutes(config)
    .filter((route) => route.model === undefined && (!plan.freeTierOnly || route.freeTier))
    .map((route) => route.prefix)
    .filter((prefix) => !config.models.some((model) => model.id.startsWith(prefix) && model.id.length > prefix.length))
    .filter((prefix) => keyAllowsModel(key, `${prefix}*`));
  return [...new Set(prefixes)].map((prefix) => ({ prefix, pricing }));
}
