// /admin/v1/plans, providers, routes and tools: the config changes of `gw plans|providers|routes|tools`
// (docs/decisions.md §25), made by the same functions on the raw config (admin/config-edits/) and
// validated as a whole the same way, through the gateway, which runs the new config before the
// answer leaves. A refusal of the shared layer is a 400 naming the field, a 404 or a 409; every
// change is audited with its action and target (never a value: a provider's key is a secret).
import type { H3Event } from "h3";
import { AdminInputError } from "../../admin/admin-requests.js";
import { ConfigEditRefusal } from "../../admin/config-edits/config-edit-refusal.js";
import { planToSet, removablePlan, removePlanEntry, setPlanLimits } from "../../admin/config-edits/plans.js";
import { addProvider, changeProvider, checkProviderType, type ProviderChanges, providerView, removeProvider } from "../../admin/config-edits/providers.js";
import { addRoute, changeRoute, removeRoute } from "../../admin/config-edits/routes.js";
import { disableTool, enableTool, toolOverview } from "../../admin/config-edits/tools.js";
import { planSetSchema, providerAddSchema, providerUpdateSchema, routeAddSchema, routeUpdateSchema, toolEnableSchema } from "../../admin/config-requests.js";
import { planListing } from "../../admin/plan-listing.js";
import { ConfigError } from "../../config/config-error.js";
import type { RawConfig } from "../../config/config-file.js";
import { routeSchema } from "../../config/config-schema.js";
import type { Config } from "../../config/resolved-config.js";
import { AdminConflictError, AdminNotFoundError, InvalidRequestError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { providerTypeCapabilities } from "../../gateway/provider-set.js";
import { parseWithSchema } from "../../gateway/request-schema.js";
import { readJsonObject } from "../read-json-body.js";
import { auditAction } from "./admin-audit.js";
import { pathParam } from "./admin-lists.js";
import type { AdminRoutes } from "./admin-routes.js";

/** Config change bodies are small: a plan's limits, a provider, a route. */
const MAX_CONFIG_BODY_BYTES = 64 * 1024;

export function registerAdminConfig(app: AdminRoutes, gateway: Gateway): void {
  app.put("/admin/v1/plans/:plan", async (event) => {
    const { create = false, ...limits } = parseWithSchema(planSetSchema, await readJsonObject(event, MAX_CONFIG_BODY_BYTES));
    const changes = Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined));
    if (Object.keys(changes).length === 0 && !create) throw new InvalidRequestError('Nothing to set: give a limit (e.g. "monthlyCredits"), or "create": true.');
    const { plan, created } = refusedAsApi(() => planToSet(gateway.config, pathParam(event, "plan"), create, '; to define a new plan, send "create": true'));
    let config = gateway.config;
    if (Object.keys(changes).length > 0 || created) ({ config } = await configChange(gateway, (raw) => setPlanLimits(raw, plan, changes), `plans.${plan}.`));
    auditAction(event, "plans.set", plan);
    event.res.status = created ? 201 : 200;
    return { ...planListing(config, plan), created };
  });

  app.delete("/admin/v1/plans/:plan", async (event) => {
    const plan = refusedAsApi(() => removablePlan(gateway.config, pathParam(event, "plan"), gateway.store.data.agents));
    const { result } = await configChange(gateway, (raw) => removePlanEntry(raw, plan));
    auditAction(event, "plans.remove", plan);
    return result;
  });

  app.post("/admin/v1/providers", async (event) => {
    const { name, ...provider } = parseWithSchema(providerAddSchema, await readJsonObject(event, MAX_CONFIG_BODY_BYTES));
    refusedAsApi(() => checkProviderType(provider.type, providerTypeCapabilities()));
    const { result: entry } = await configChange(gateway, (raw) => addProvider(raw, name, provider), `providers.${name}.`);
    auditAction(event, "providers.add", name);
    event.res.status = 201;
    return providerAnswer(name, entry);
  });

  app.patch("/admin/v1/providers/:provider", async (event) => {
    const name = pathParam(event, "provider");
    const body = parseWithSchema(providerUpdateSchema, await readJsonObject(event, MAX_CONFIG_BODY_BYTES));
    if (body.type !== undefined) {
      const type = body.type;
      refusedAsApi(() => checkProviderType(type, providerTypeCapabilities()));
    }
    // The shared change takes "" for "remove", as `gw providers set --base-url ''` gives it.
    const changes: ProviderChanges = {};
    if (body.type !== undefined) changes.type = body.type;
    if (body.baseUrl !== undefined) changes.baseUrl = body.baseUrl ?? "";
    if (body.apiKey !== undefined) changes.apiKey = body.apiKey ?? "";
    if (body.headers !== undefined) changes.headers = Object.fromEntries(Object.entries(body.headers).map(([header, value]) => [header, value ?? ""]));
    if (Object.keys(changes).length === 0) throw new InvalidRequestError('Nothing to change: give "type", "baseUrl", "apiKey" or "headers".');
    const { result } = await configChange(gateway, (raw) => changeProvider(raw, name, changes), `providers.${name}.`);
    auditAction(event, "providers.set", name);
    // What changed, by field and header name only: never a value.
    return { ...providerAnswer(name, result.entry), changed: result.changed };
  });

  app.delete("/admin/v1/providers/:provider", async (event) => {
    const name = pathParam(event, "provider");
    const { result: entry } = await configChange(gateway, (raw) => removeProvider(raw, name));
    auditAction(event, "providers.remove", name);
    return providerAnswer(name, entry);
  });

  app.post("/admin/v1/routes", async (event) => {
    const { replace = false, ...route } = parseWithSchema(routeAddSchema, await readJsonObject(event, MAX_CONFIG_BODY_BYTES));
    const { result, config } = await configChange(gateway, (raw) => addRoute(raw, route, replace), /^routes\[\d+\]\./);
    auditAction(event, "routes.add", routeTarget(result.index, route.prefix));
    event.res.status = result.replaced ? 200 : 201;
    return { index: result.index, replaced: result.replaced, route: config.routes[result.index] };
  });

  app.patch("/admin/v1/routes/:index", async (event) => {
    const index = routeIndex(event);
    const body = parseWithSchema(routeUpdateSchema, await readJsonObject(event, MAX_CONFIG_BODY_BYTES));
    if (body.priority === undefined && body.freeTier === undefined && body.model === undefined)
      throw new InvalidRequestError('Nothing to change: give "priority", "freeTier" or "model".');
    const changes = { priority: body.priority, freeTier: body.freeTier, model: body.model === null ? "" : body.model };
    const { config } = await configChange(gateway, (raw) => changeRoute(raw, index, changes, expectedPrefix(event)), `routes[${index}].`);
    const route = config.routes[index]!;
    auditAction(event, "routes.set", routeTarget(index, route.prefix));
    return { index, route };
  });

  app.delete("/admin/v1/routes/:index", async (event) => {
    const index = routeIndex(event);
    const { result: removed } = await configChange(gateway, (raw) => removeRoute(raw, index, expectedPrefix(event)));
    // As GET /routes showed it: the config's defaults filled in (the route was valid in the config it left).
    const route = routeSchema.parse(removed);
    auditAction(event, "routes.remove", routeTarget(index, route.prefix));
    return { index, route };
  });

  app.get("/admin/v1/tools", () => ({ object: "list", data: toolOverview(gateway.config) }));

  app.post("/admin/v1/tools/:tool/models", async (event) => {
    const tool = pathParam(event, "tool");
    const body = parseWithSchema(toolEnableSchema, await readJsonObject(event, MAX_CONFIG_BODY_BYTES));
    const types = providerTypeCapabilities();
    const { result, config } = await configChange(gateway, (raw) => enableTool(raw, tool, body.model, body.default ?? false, types), `tools.${tool}.`);
    auditAction(event, "tools.enable", `${tool} ${body.model}`);
    event.res.status = result.added ? 201 : 200;
    const missingProvider = result.provider !== undefined && config.providers[result.provider] === undefined ? result.provider : null;
    return { tool: result.tool, default: result.default, allow: result.allow, added: result.added, missingProvider };
  });

  app.delete("/admin/v1/tools/:tool/models/:model", async (event) => {
    const tool = pathParam(event, "tool");
    const model = pathParam(event, "model");
    const { result } = await configChange(gateway, (raw) => disableTool(raw, tool, model));
    auditAction(event, "tools.disable", `${tool} ${model}`);
    return result;
  });
}

/**
 * A change made through the gateway (in force when this returns), its refusals as the API's
 * errors. `within` is the config path of what the request edits: a field of the changed config
 * that does not validate is named as the body names it (`plans.gold.monthlyCredits` ->
 * `monthlyCredits`).
 */
async function configChange<T>(gateway: Gateway, edit: (raw: RawConfig) => T, within?: string | RegExp): Promise<{ result: T; config: Config }> {
  try {
    return await gateway.editConfig(edit);
  } catch (error) {
    if (error instanceof ConfigError) throw invalidConfig(error, within);
    throw apiErrorOf(error);
  }
}

/** A check of the shared layer, its refusal as the API's error. */
function refusedAsApi<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw apiErrorOf(error);
  }
}

function apiErrorOf(error: unknown): unknown {
  if (error instanceof AdminInputError) return new InvalidRequestError(sentence(error.message), { param: error.param });
  if (error instanceof ConfigEditRefusal)
    return error.kind === "not_found" ? new AdminNotFoundError(sentence(error.message)) : new AdminConflictError(sentence(error.message));
  return error;
}

/** The changed config refused by its validation: a 400 naming the field, never the file's location on the server. */
function invalidConfig(error: ConfigError, within: string | RegExp | undefined): InvalidRequestError {
  const problem = error.message.slice(`${error.file}: ${error.path ? `${error.path}: ` : ""}`.length);
  const param = within === undefined ? error.path : error.path.replace(typeof within === "string" ? new RegExp(`^${escapeRegExp(within)}`) : within, "");
  const message = `The change would leave the config invalid: ${error.path ? `${error.path}: ` : ""}${problem}.`;
  return new InvalidRequestError(message, param ? { param } : {});
}

/**
 * The shared layer words its refusals for the command line (lower case, no full stop); the API's
 * messages are sentences. One that starts with a name as written (`routes[0]`, `"vip"`) keeps it.
 */
function sentence(message: string): string {
  const capitalised = /^[a-z]+ /.test(message) ? `${message.charAt(0).toUpperCase()}${message.slice(1)}` : message;
  return /[.!?]$/.test(capitalised) ? capitalised : `${capitalised}.`;
}

/**
 * A provider as GET /admin/v1/providers lists it, from the entry as written: an `${ENV}` reference
 * shows as written (it names a variable, not the secret), a literal key or header value as ****.
 */
function providerAnswer(name: string, entry: unknown) {
  const view = providerView(name, entry);
  const responsesApi = typeof entry === "object" && entry !== null && (entry as { responsesApi?: unknown }).responsesApi === true;
  return { name, type: view.type, baseUrl: view.baseUrl ?? null, apiKey: view.apiKey ?? null, headers: view.headers ?? {}, responsesApi };
}

/** A route's position, the # of `gw routes list` and the index of GET /admin/v1/routes. */
function routeIndex(event: H3Event): number {
  const text = pathParam(event, "index");
  if (!/^\d{1,6}$/.test(text))
    throw new InvalidRequestError(`Invalid route index "${text}": expected the route's position (0, 1 ...) in GET /admin/v1/routes.`, { param: "index" });
  return Number(text);
}

/** `?prefix=`: the prefix the caller saw at that position; the change is refused (409) when the routes have moved since. */
function expectedPrefix(event: H3Event): string | undefined {
  return event.url.searchParams.get("prefix") ?? undefined;
}

function routeTarget(index: number, prefix: string): string {
  return `routes[${index}] ${prefix}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
