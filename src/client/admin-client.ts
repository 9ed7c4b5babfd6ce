// The admin API (/admin/v1, docs/decisions.md §25) from the CLI, for provisioning commands pointed
// at a remote gateway (`--url` and an admin token): the same answers as the local commands, since
// the server computes them with the same functions.

import type { KeyLimitsBody } from "../admin/admin-requests.js";
import type { AgentListing } from "../admin/agent-listing.js";
import type { ToolOverview, ToolView } from "../admin/config-edits/tools.js";
import type { PlanSetBody, ProviderAddBody, ProviderUpdateBody, RouteAddBody, RouteUpdateBody } from "../admin/config-requests.js";
import type { KeyListing } from "../admin/key-listing.js";
import type { PlanListing } from "../admin/plan-listing.js";
import type { RouteConfig } from "../config/config-schema.js";
import { isObject } from "../json/json-values.js";
import { type AnswerShape, answerShape, hasList, hasString } from "./answer-shape.js";
import { HttpTransport } from "./http-transport.js";

export interface AdminClientOptions {
  /** The gateway's root, e.g. https://gw.example.com. */
  baseUrl: string;
  /** An admin token (`gw admin token create`). */
  token: string;
  /** JSON GETs over node:http (TransportOptions.plainGets). */
  plainGets?: boolean;
}

export type { PlanListing };

export interface NewKey extends KeyListing {
  key: string;
}

/** A plan as PUT /admin/v1/plans/{plan} answers it: its listing, and whether the call defined it. */
export interface PlanChange extends PlanListing {
  created: boolean;
}

/** A provider as the admin API shows it: a key or header value as ****, or an `${ENV}` reference as written. */
export interface ProviderListing {
  name: string;
  type: string;
  baseUrl: string | null;
  apiKey: string | null;
  headers: Record<string, string>;
  responsesApi: boolean;
}

/** A provider changed: what changed, by field and header name only (`apiKey`, `header X-Title removed`). */
export interface ProviderChange extends ProviderListing {
  changed: string[];
}

/** A route added, changed or removed, with its position (the # of `gw routes list`). */
export interface RouteChange {
  index: number;
  replaced?: boolean;
  route: RouteConfig;
}

export interface ToolEnabled extends ToolView {
  added: boolean;
  /** The provider the model needs when it is not configured (the tool answers 503 for it until it is). */
  missingProvider: string | null;
}

interface List<T> {
  object: "list";
  data: T[];
}

const list = <T>(what: string): AnswerShape<List<T>> => answerShape(what, (body): body is List<T> => hasList(body, "data"));
const agent = answerShape("agent", (body): body is AgentListing => hasString(body, "id") && hasString(body, "name"));
const key = answerShape("key", (body): body is KeyListing => hasString(body, "id") && hasString(body, "prefix"));
const newKey = answerShape("new key", (body): body is NewKey => hasString(body, "key") && hasString(body, "prefix"));
const plan = answerShape("plan", (body): body is PlanChange => hasString(body, "name") && isObject(body) && typeof body.created === "boolean");
const provider = answerShape("provider", (body): body is ProviderListing => hasString(body, "name") && hasString(body, "type"));
const providerChange = answerShape("provider", (body): body is ProviderChange => hasString(body, "name") && hasList(body, "changed"));
const routeChange = answerShape("route", (body): body is RouteChange => isObject(body) && typeof body.index === "number" && isObject(body.route));
const tool = answerShape("tool", (body): body is ToolView => hasString(body, "tool") && hasList(body, "allow"));
const toolEnabled = answerShape(
  "tool",
  (body): body is ToolEnabled => hasString(body, "tool") && hasList(body, "allow") && isObject(body) && typeof body.added === "boolean",
);
const planRemoval = answerShape(
  "plan removal",
  (body): body is { plan: string; removedAliases: string[] } => hasString(body, "plan") && hasList(body, "removedAliases"),
);
const anything = answerShape("answer", (body): body is Record<string, unknown> => isObject(body));

export class AdminClient {
  private readonly transport: HttpTransport;

  constructor(options: AdminClientOptions) {
    this.transport = new HttpTransport({ baseUrl: options.baseUrl, apiKey: options.token, plainGets: options.plainGets });
  }

  async agents(): Promise<AgentListing[]> {
    return (await this.transport.json("/admin/v1/agents", list<AgentListing>("agents"))).data;
  }

  createAgent(name: string, plan?: string): Promise<AgentListing> {
    return this.transport.json("/admin/v1/agents", agent, { method: "POST", json: { name, ...(plan === undefined ? {} : { plan }) } });
  }

  setAgentPlan(name: string, plan: string): Promise<AgentListing> {
    return this.transport.json(`/admin/v1/agents/${encodeURIComponent(name)}`, agent, { method: "PATCH", json: { plan } });
  }

  async keys(filter: { agent?: string; revoked?: boolean } = {}): Promise<KeyListing[]> {
    const query = { agent: filter.agent, revoked: filter.revoked ? "true" : undefined };
    return (await this.transport.json("/admin/v1/keys", list<KeyListing>("keys"), { query })).data;
  }

  createKey(agentName: string, plan: string | undefined, limits: KeyLimitsBody): Promise<NewKey> {
    return this.transport.json("/admin/v1/keys", newKey, { method: "POST", json: { agent: agentName, ...(plan === undefined ? {} : { plan }), ...limits } });
  }

  updateKey(prefixOrId: string, limits: KeyLimitsBody): Promise<KeyListing> {
    return this.transport.json(`/admin/v1/keys/${encodeURIComponent(prefixOrId)}`, key, { method: "PATCH", json: limits });
  }

  revokeKey(prefixOrId: string): Promise<KeyListing> {
    return this.transport.json(`/admin/v1/keys/${encodeURIComponent(prefixOrId)}`, key, { method: "DELETE" });
  }

  async plans(): Promise<PlanListing[]> {
    return (await this.transport.json("/admin/v1/plans", list<PlanListing>("plans"))).data;
  }

  /** Set a plan's limits; `create` defines a plan of a new name (`gw plans set --create`). */
  setPlan(name: string, body: PlanSetBody): Promise<PlanChange> {
    return this.transport.json(`/admin/v1/plans/${encodeURIComponent(name)}`, plan, { method: "PUT", json: body });
  }

  removePlan(name: string): Promise<{ plan: string; removedAliases: string[] }> {
    return this.transport.json(`/admin/v1/plans/${encodeURIComponent(name)}`, planRemoval, { method: "DELETE" });
  }

  async providers(): Promise<ProviderListing[]> {
    return (await this.transport.json("/admin/v1/providers", list<ProviderListing>("providers"))).data;
  }

  addProvider(body: ProviderAddBody): Promise<ProviderListing> {
    return this.transport.json("/admin/v1/providers", provider, { method: "POST", json: body });
  }

  /** Change only what is given; `null` removes a base URL, a key or a header. */
  updateProvider(name: string, body: ProviderUpdateBody): Promise<ProviderChange> {
    return this.transport.json(`/admin/v1/providers/${encodeURIComponent(name)}`, providerChange, { method: "PATCH", json: body });
  }

  removeProvider(name: string): Promise<ProviderListing> {
    return this.transport.json(`/admin/v1/providers/${encodeURIComponent(name)}`, provider, { method: "DELETE" });
  }

  async routes(): Promise<RouteConfig[]> {
    return (await this.transport.json("/admin/v1/routes", list<RouteConfig>("routes"))).data;
  }

  addRoute(body: RouteAddBody): Promise<RouteChange> {
    return this.transport.json("/admin/v1/routes", routeChange, { method: "POST", json: body });
  }

  /** Change routes[INDEX], refused when its prefix is no longer `prefix` (the routes changed since they were listed). */
  updateRoute(index: number, prefix: string, body: RouteUpdateBody): Promise<RouteChange> {
    return this.transport.json(`/admin/v1/routes/${index}`, routeChange, { method: "PATCH", json: body, query: { prefix } });
  }

  removeRoute(index: number, prefix: string): Promise<RouteChange> {
    return this.transport.json(`/admin/v1/routes/${index}`, routeChange, { method: "DELETE", query: { prefix } });
  }

  async tools(): Promise<ToolOverview[]> {
    return (await this.transport.json("/admin/v1/tools", list<ToolOverview>("tools"))).data;
  }

  enableTool(toolName: string, model: string, makeDefault: boolean): Promise<ToolEnabled> {
    return this.transport.json(`/admin/v1/tools/${encodeURIComponent(toolName)}/models`, toolEnabled, {
      method: "POST",
      json: { model, ...(makeDefault ? { default: true } : {}) },
    });
  }

  disableTool(toolName: string, model: string): Promise<ToolView> {
    return this.transport.json(`/admin/v1/tools/${encodeURIComponent(toolName)}/models/${encodeURIComponent(model)}`, tool, { method: "DELETE" });
  }

  /** A usage report as the gateway writes it (`format` json or csv in `query`), streamed to `write`. */
  async usageReport(query: URLSearchParams, write: (text: string) => Promise<void>): Promise<void> {
    const response = await this.transport.request(`/admin/v1/usage?${query}`);
    if (!response.body) return;
    const decoder = new TextDecoder();
    for await (const chunk of response.body) await write(decoder.decode(chunk, { stream: true }));
    const rest = decoder.decode();
    if (rest) await write(rest);
  }

  /** Any other admin read, as the server answers it. */
  read(path: string, query?: Record<string, string | undefined>): Promise<Record<string, unknown>> {
    return this.transport.json(`/admin/v1/${path}`, anything, { query });
  }
}
