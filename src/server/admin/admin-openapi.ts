// The admin API's OpenAPI 3.1 document (docs/decisions.md §25), served at GET /admin/v1/openapi.json
// and written to docs/admin-openapi.json by the build. Request bodies are the zod schemas the
// handlers parse with (admin/admin-requests.ts), so the two cannot drift; the answers are
// described here, and the tests validate every answer they get against this document.
import { z } from "zod";
import { agentCreateSchema, agentUpdateSchema, keyCreateSchema, keyUpdateSchema } from "../../admin/admin-requests.js";
import { planSetSchema, providerAddSchema, providerUpdateSchema, routeAddSchema, routeUpdateSchema, toolEnableSchema } from "../../admin/config-requests.js";

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: "null" }] });
const string: Schema = { type: "string" };
const integer: Schema = { type: "integer" };
const time: Schema = { type: "string", format: "date-time" };
const object = (properties: Record<string, Schema>, required = Object.keys(properties)): Schema => ({ type: "object", properties, required });
const listOf = (item: string): Schema => object({ object: { const: "list" }, data: { type: "array", items: ref(item) } });

const budget = object({ credits: integer, period: { enum: ["month", "total"] } });

const schemas: Record<string, Schema> = {
  Error: object({ error: object({ message: string, type: string, code: string, param: string }, ["message", "type", "code"]) }),
  AdminToken: object({
    object: { const: "admin_token" },
    id: string,
    name: string,
    prefix: string,
    readOnly: { type: "boolean" },
    createdAt: time,
    expiresAt: nullable(time),
  }),
  Agent: object({ id: string, name: string, plan: string, createdAt: time, activeKeys: integer }),
  Key: object({
    id: string,
    name: nullable(string),
    prefix: string,
    agent: string,
    plan: string,
    budget: nullable(budget),
    spent: integer,
    expiresAt: nullable(time),
    expired: { type: "boolean" },
    models: nullable({ type: "array", items: string }),
    rpm: nullable(integer),
    tpm: nullable(integer),
    cacheTtlSeconds: nullable(integer),
    lastUsedAt: nullable(time),
    createdAt: time,
    revokedAt: nullable(time),
  }),
  NewKey: { allOf: [ref("Key"), object({ key: { type: "string", pattern: "^gw_" } })] },
  Plan: object({
    name: string,
    aliases: { type: "array", items: string },
    monthlyCredits: integer,
    freeTierOnly: { type: "boolean" },
    requestsPerMinute: integer,
    imageMaxN: integer,
    imageMaxResolution: string,
    storageBytes: integer,
    storageOperationsPerPeriod: integer,
    lowLatencyRouting: { type: "boolean" },
  }),
  Route: { type: "object", properties: { prefix: string }, required: ["prefix"] },
  Provider: object({
    name: string,
    type: string,
    baseUrl: nullable(string),
    apiKey: nullable({ type: "string", description: "**** when set; never the secret" }),
    headers: { type: "object", additionalProperties: string },
    responsesApi: { type: "boolean" },
  }),
  PlanChange: { allOf: [ref("Plan"), object({ created: { type: "boolean", description: "true when this call defined the plan (201)" } })] },
  PlanRemoval: object({ plan: string, removedAliases: { type: "array", items: string } }),
  ProviderChange: {
    allOf: [ref("Provider"), object({ changed: { type: "array", items: string, description: "what changed, by field and header name only" } })],
  },
  RouteChange: object(
    {
      index: { type: "integer", description: "the route's position in GET /admin/v1/routes" },
      replaced: { type: "boolean", description: "POST: it took the place of the route it would have duplicated" },
      route: ref("Route"),
    },
    ["index", "route"],
  ),
  Tool: object(
    {
      tool: string,
      default: nullable(string),
      allow: { type: "array", items: string },
      available: {
        type: "array",
        description: "catalog tools: the models it could take",
        items: object({ id: string, name: string, provider: string, providerConfigured: { type: "boolean" } }),
      },
    },
    ["tool", "default", "allow"],
  ),
  ToolEnabled: {
    allOf: [
      ref("Tool"),
      object({
        added: { type: "boolean" },
        missingProvider: nullable({ type: "string", description: "the provider the model needs, when it is not configured (503 until it is)" }),
      }),
    ],
  },
  ProviderHealth: object({
    name: string,
    breaker: { enum: ["closed", "open", "half-open"] },
    attempts: integer,
    failures: integer,
    p50Ms: nullable(integer),
    p99Ms: nullable(integer),
    recentFailures: {
      type: "array",
      items: object({ time, outcome: string, cause: string, durationMs: integer }, ["time", "outcome", "durationMs"]),
    },
  }),
  AuditEntry: object(
    {
      time,
      requestId: string,
      actor: object({ id: string, name: string, prefix: string }),
      method: string,
      path: string,
      status: integer,
      remote: string,
      action: string,
      target: string,
    },
    ["time", "requestId", "method", "path", "status", "remote"],
  ),
  Batch: object({
    id: string,
    agent: string,
    keyPrefix: string,
    endpoint: string,
    status: string,
    requestCounts: object({ total: integer, completed: integer, failed: integer }),
    createdAt: integer,
    expiresAt: integer,
    completedAt: nullable(integer),
    tags: { type: "array", items: string },
  }),
  VideoJob: object({
    id: string,
    agent: string,
    keyPrefix: string,
    model: string,
    provider: string,
    status: string,
    progress: nullable({ type: "number" }),
    durationSeconds: { type: "number" },
    resolution: string,
    queuedAt: time,
    finishedAt: nullable(time),
    estimateCredits: integer,
    credits: nullable(integer),
    error: nullable(string),
  }),
  UsageRows: {
    type: "object",
    properties: {
      period: string,
      since: time,
      until: time,
      agents: { type: "array", items: object({ agent: string, plan: string, used: integer, balance: integer, overage: integer }, ["agent", "plan", "used"]) },
      rows: { type: "array", items: ref("UsageRow") },
      skipped: integer,
    },
    required: ["agents", "rows"],
  },
  UsageGroups: {
    type: "object",
    properties: {
      period: string,
      since: time,
      until: time,
      agent: string,
      by: { enum: ["day", "model", "agent", "key", "endpoint", "tag"] },
      groups: { type: "array", items: { type: "object", properties: { rows: integer, credits: integer, overage: integer }, required: ["rows", "credits"] } },
      total: object({ rows: integer, credits: integer, overage: integer }, ["rows", "credits"]),
      skipped: integer,
    },
    required: ["by", "groups", "total"],
  },
  UsageRow: object(
    {
      id: string,
      time,
      agent: string,
      keyPrefix: string,
      endpoint: string,
      model: string,
      provider: string,
      units: { type: "object", additionalProperties: { type: "number" } },
      credits: integer,
      requestId: string,
      overage: integer,
      cached: { const: true },
      batch: string,
      tags: { type: "array", items: string },
    },
    ["id", "time", "agent", "keyPrefix", "endpoint", "model", "provider", "units", "credits", "requestId"],
  ),
  StorageUse: object({
    agent: string,
    plan: string,
    usedBytes: integer,
    limitBytes: integer,
    operations: object({ used: integer, limit: integer, period: string }),
  }),
};

const body = (schema: z.ZodType): Schema => ({
  required: true,
  content: { "application/json": { schema: z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) } },
});
const answer = (description: string, schema: Schema) => ({ description, content: { "application/json": { schema } } });
const failures = {
  "400": answer("A bad query or body; `param` names it", ref("Error")),
  "401": answer("No admin token, an invalid or expired one, or an API key", ref("Error")),
  "403": answer("A read-only token asking for a change, or an address outside loopback and admin.allowFrom", ref("Error")),
  "404": answer("Not found; every /admin path answers this while no admin token exists", ref("Error")),
};
const query = (name: string, description: string, schema: Schema = string) => ({ name, in: "query", required: false, description, schema });
const pathParameter = (name: string, description: string) => ({ name, in: "path", required: true, description, schema: string });
const agentQuery = query("agent", "only this agent (name or id)");
const limitQuery = query("limit", "at most this many, 1 to 1000 (100)", { type: "integer", minimum: 1, maximum: 1000 });

const conflictAnswer = (description: string) => ({ "409": answer(description, ref("Error")) });
/** A config change: refused with a 400 naming the field, 404 for a name or position that does not exist, 409 where the config forbids it. */
const change = (summary: string, responses: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  summary,
  ...extra,
  responses: { ...responses, ...failures },
});
const routeQuery = query("prefix", "the route's prefix as listed; refused (409) when the route at that position has another by now");

const read = (summary: string, schema: Schema, parameters: unknown[] = []) => ({
  summary,
  parameters,
  responses: { "200": answer(summary, schema), ...failures },
});

export const adminOpenApi = {
  openapi: "3.1.0",
  info: {
    title: "gw admin API",
    version: "1",
    description:
      "Manage and watch a gw gateway: agents, keys, plans, routes, providers, tools, usage, jobs, storage, provider health and the audit log. Send `Authorization: Bearer <admin token>` (`gw admin token create`).",
  },
  components: {
    schemas,
    securitySchemes: { adminToken: { type: "http", scheme: "bearer", description: "An admin token (gwa_…); API keys are refused" } },
  },
  security: [{ adminToken: [] }],
  paths: {
    "/admin/v1/me": { get: read("The calling admin token", ref("AdminToken")) },
    "/admin/v1/agents": {
      get: read("Every agent with its plan and live keys", listOf("Agent")),
      post: {
        summary: "Create an agent",
        requestBody: body(agentCreateSchema),
        responses: { "201": answer("The agent", ref("Agent")), "409": answer("The name is taken", ref("Error")), ...failures },
      },
    },
    "/admin/v1/agents/{agent}": {
      patch: {
        summary: "Move an agent to another plan",
        parameters: [pathParameter("agent", "the agent's name or id")],
        requestBody: body(agentUpdateSchema),
        responses: { "200": answer("The agent", ref("Agent")), ...failures },
      },
    },
    "/admin/v1/keys": {
      get: read("API keys (never the key itself), with spend and last use", listOf("Key"), [agentQuery, query("revoked", "true: include revoked keys")]),
      post: {
        summary: "Create an API key (the agent is created when missing); the key is answered this once",
        requestBody: body(keyCreateSchema),
        responses: { "201": answer("The key, whole, and its listing", ref("NewKey")), ...failures },
      },
    },
    "/admin/v1/keys/{key}": {
      patch: {
        summary: "Change a live key's limits (null removes one)",
        parameters: [pathParameter("key", "the key's id or visible prefix")],
        requestBody: body(keyUpdateSchema),
        responses: { "200": answer("The key", ref("Key")), "409": answer("The prefix names several keys", ref("Error")), ...failures },
      },
      delete: {
        summary: "Revoke a live key",
        parameters: [pathParameter("key", "the key's id or visible prefix")],
        responses: { "200": answer("The revoked key", ref("Key")), "409": answer("The prefix names several keys", ref("Error")), ...failures },
      },
    },
    "/admin/v1/plans": { get: read("Plans with their resolved limits", listOf("Plan")) },
    "/admin/v1/plans/{plan}": {
      put: change(
        "Set a plan's limits (`gw plans set`); `create` defines a plan of a new name, with free's limits and those given",
        { "200": answer("The plan", ref("PlanChange")), "201": answer("The plan, defined by this call", ref("PlanChange")) },
        { parameters: [pathParameter("plan", "the plan's name or alias")], requestBody: body(planSetSchema) },
      ),
      delete: change(
        "Remove a plan and the aliases naming it (`gw plans remove`); refused for the built-in plans and a plan an agent is on",
        { "200": answer("The plan removed", ref("PlanRemoval")), ...conflictAnswer("An alias, a built-in plan, or some agent's plan") },
        { parameters: [pathParameter("plan", "the plan's name")] },
      ),
    },
    "/admin/v1/routes": {
      get: read("Routes as configured", listOf("Route")),
      post: change(
        "Add a route (`gw routes add`): to one provider, or among weighted upstreams; `replace` puts it in the place of the route it would duplicate",
        {
          "201": answer("The route added", ref("RouteChange")),
          "200": answer("The route, in the place of the one it replaced", ref("RouteChange")),
          ...conflictAnswer("A route with that prefix and provider (for weighted ones: any) exists"),
        },
        { requestBody: body(routeAddSchema) },
      ),
    },
    "/admin/v1/routes/{index}": {
      patch: change(
        "Change a route's priority, free tier or model (`gw routes set`); `model: null` stops sending a model of its own",
        { "200": answer("The route", ref("RouteChange")), ...conflictAnswer("The route at that position has another prefix by now") },
        { parameters: [pathParameter("index", "the route's position in GET /admin/v1/routes"), routeQuery], requestBody: body(routeUpdateSchema) },
      ),
      delete: change(
        "Remove a route (`gw routes remove`)",
        { "200": answer("The route removed", ref("RouteChange")), ...conflictAnswer("The route at that position has another prefix by now") },
        { parameters: [pathParameter("index", "the route's position in GET /admin/v1/routes"), routeQuery] },
      ),
    },
    "/admin/v1/providers": {
      get: read("Providers, secrets masked", listOf("Provider")),
      post: change(
        "Add a provider (`gw providers add`); an `apiKey` may be a literal or an `${ENV}` reference, and is never answered",
        { "201": answer("The provider, its key and header values masked", ref("Provider")), ...conflictAnswer("A provider of that name exists") },
        { requestBody: body(providerAddSchema) },
      ),
    },
    "/admin/v1/providers/health": { get: read("Each provider's breaker and this instance's recent attempts", listOf("ProviderHealth")) },
    "/admin/v1/providers/{provider}": {
      patch: change(
        "Change only the given fields of a provider (`gw providers set`); `null` removes a base URL, a key or a header",
        { "200": answer("The provider, its key and header values masked", ref("ProviderChange")) },
        { parameters: [pathParameter("provider", "the provider's name")], requestBody: body(providerUpdateSchema) },
      ),
      delete: change(
        "Remove a provider (`gw providers remove`); refused while a route sends traffic to it",
        { "200": answer("The provider removed, masked", ref("Provider")), ...conflictAnswer("A route uses the provider") },
        { parameters: [pathParameter("provider", "the provider's name")] },
      ),
    },
    "/admin/v1/tools": { get: read("Each tool's default and allowlist, and for catalog tools the models it could take", listOf("Tool")) },
    "/admin/v1/tools/{tool}/models": {
      post: change(
        "Allow a model for a tool (`gw tools enable`), the default when the tool has none or with `default`",
        { "201": answer("The tool", ref("ToolEnabled")), "200": answer("The tool (the model was allowed already)", ref("ToolEnabled")) },
        { parameters: [pathParameter("tool", "image, upscale, background, describe ...")], requestBody: body(toolEnableSchema) },
      ),
    },
    "/admin/v1/tools/{tool}/models/{model}": {
      delete: change(
        "Take a model off a tool's allowlist (`gw tools disable`); a default it was passes to the next allowed model, or none",
        { "200": answer("The tool", ref("Tool")) },
        {
          parameters: [pathParameter("tool", "the tool"), pathParameter("model", "the model id, percent-encoded (`local%2Flanczos`)")],
        },
      ),
    },
    "/admin/v1/batches": { get: read("Batches, newest first", listOf("Batch"), [agentQuery, limitQuery]) },
    "/admin/v1/video/jobs": { get: read("Video jobs, newest first (never their prompts)", listOf("VideoJob"), [agentQuery, limitQuery]) },
    "/admin/v1/storage": { get: read("Each agent's storage against its plan", listOf("StorageUse"), [agentQuery]) },
    "/admin/v1/usage": {
      get: {
        summary: "Usage as `gw usage --format json|csv` reports it: every row of the range, or sums per group",
        parameters: [
          query("period", "one calendar month, YYYY-MM (default: this month, UTC)"),
          query("since", "start, inclusive: YYYY-MM-DD or an ISO 8601 time (UTC unless it names a zone)"),
          query("until", "end: a date is included whole, a time is exclusive"),
          agentQuery,
          query("by", "sum per day, model, agent, key, endpoint or tag", { enum: ["day", "model", "agent", "key", "endpoint", "tag"] }),
          { ...query("tag", "only rows carrying this tag; repeat for any of several"), explode: true },
          query("format", "json (default) or csv", { enum: ["json", "csv"] }),
        ],
        responses: {
          "200": {
            description: "The report (streamed)",
            content: {
              "application/json": { schema: { anyOf: [ref("UsageRows"), ref("UsageGroups")] } },
              "text/csv": { schema: { type: "string" } },
            },
          },
          ...failures,
        },
      },
    },
    "/admin/v1/audit": { get: read("The audit log, newest first", listOf("AuditEntry"), [limitQuery]) },
    "/admin/v1/openapi.json": { get: read("This document", { type: "object" }) },
  },
};
