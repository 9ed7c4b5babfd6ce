// /admin/v1/agents and /admin/v1/keys: the same store changes as `gw agents` and `gw keys`
// (store/provisioning.ts), the same listings (admin/agent-listing.ts, admin/key-listing.ts). A new
// key is answered once, whole; afterwards only its prefix exists anywhere.

import { AdminInputError, agentCreateSchema, agentUpdateSchema, keyCreateSchema, keyLimitsOf, keyUpdateSchema, planNamed } from "../../admin/admin-requests.js";
import { agentListing } from "../../admin/agent-listing.js";
import { keyListing } from "../../admin/key-listing.js";
import { AdminConflictError, AdminNotFoundError, InvalidRequestError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { parseWithSchema } from "../../gateway/request-schema.js";
import { createAgent, createKey, findAgent, ProvisioningError, revokeKey, setAgentPlan, setKeyLimits } from "../../store/provisioning.js";
import type { KeyRecord } from "../../store/records.js";
import { readJsonObject } from "../read-json-body.js";
import { auditAction } from "./admin-audit.js";
import { agentsOf, pathParam } from "./admin-lists.js";
import type { AdminRoutes } from "./admin-routes.js";

/** Admin bodies are small: a key's limits, an agent's plan. */
const MAX_ADMIN_BODY_BYTES = 64 * 1024;

export function registerAdminKeys(app: AdminRoutes, gateway: Gateway): void {
  app.get("/admin/v1/agents", () => ({ object: "list", data: agentListing(gateway.store.data) }));

  app.post("/admin/v1/agents", async (event) => {
    const body = parseWithSchema(agentCreateSchema, await readJsonObject(event, MAX_ADMIN_BODY_BYTES));
    const plan = checked(() => planNamed(gateway.config, body.plan ?? "free"));
    const agent = await provisioned(() => createAgent(gateway.store, body.name, plan));
    auditAction(event, "agents.create", agent.name);
    event.res.status = 201;
    return { ...agent, activeKeys: 0 };
  });

  app.patch("/admin/v1/agents/:agent", async (event) => {
    const name = pathParam(event, "agent");
    const body = parseWithSchema(agentUpdateSchema, await readJsonObject(event, MAX_ADMIN_BODY_BYTES));
    const plan = checked(() => planNamed(gateway.config, body.plan));
    if (!findAgent(gateway.store.data, name)) throw new AdminNotFoundError(`No agent "${name}".`);
    const agent = await provisioned(() => setAgentPlan(gateway.store, name, plan));
    auditAction(event, "agents.set_plan", agent.name);
    return agentListing(gateway.store.data).find((listed) => listed.id === agent.id);
  });

  app.get("/admin/v1/keys", async (event) => {
    const data = gateway.store.data;
    const agents = new Set(agentsOf(event, gateway).map((agent) => agent.id));
    const revoked = event.url.searchParams.get("revoked") === "true";
    const keys = data.keys.filter((key) => agents.has(key.agentId) && (revoked || key.revokedAt === null));
    return { object: "list", data: await keyListing(gateway.config, data, gateway.state.history, keys, new Date()) };
  });

  app.post("/admin/v1/keys", async (event) => {
    const body = parseWithSchema(keyCreateSchema, await readJsonObject(event, MAX_ADMIN_BODY_BYTES));
    const { agent, plan, ...limitsBody } = body;
    const config = gateway.config;
    const planName = plan === undefined ? undefined : checked(() => planNamed(config, plan));
    const limits = checked(() => keyLimitsOf(limitsBody, config, new Date()));
    const created = await provisioned(() => createKey(gateway.store, agent, planName, "free", limits));
    auditAction(event, "keys.create", created.record.id);
    event.res.status = 201;
    event.res.headers.set("cache-control", "no-store");
    const [listed] = await keyListing(config, gateway.store.data, gateway.state.history, [created.record], new Date());
    return { key: created.key, ...listed };
  });

  app.patch("/admin/v1/keys/:key", async (event) => {
    const named = pathParam(event, "key");
    const body = parseWithSchema(keyUpdateSchema, await readJsonObject(event, MAX_ADMIN_BODY_BYTES));
    const existing = liveKeyNamed(gateway, named);
    const limits = checked(() => keyLimitsOf(body, gateway.config, new Date(), existing));
    const key = await provisioned(() => setKeyLimits(gateway.store, existing.id, limits));
    auditAction(event, "keys.update", key.id);
    const [listed] = await keyListing(gateway.config, gateway.store.data, gateway.state.history, [key], new Date());
    return listed;
  });

  app.delete("/admin/v1/keys/:key", async (event) => {
    const existing = liveKeyNamed(gateway, pathParam(event, "key"));
    const key = await provisioned(() => revokeKey(gateway.store, existing.id));
    auditAction(event, "keys.revoke", key.id);
    const [listed] = await keyListing(gateway.config, gateway.store.data, gateway.state.history, [key], new Date());
    return listed;
  });
}

/** The live key an id or visible prefix names (as `gw keys set|revoke` takes them). */
function liveKeyNamed(gateway: Gateway, named: string): KeyRecord {
  const live = gateway.store.data.keys.filter((key) => key.revokedAt === null && (key.id === named || key.prefix.startsWith(named)));
  if (live.length === 0) throw new AdminNotFoundError(`No active key matches "${named}".`);
  if (live.length > 1) throw new AdminConflictError(`"${named}" matches ${live.length} keys; give the key's id or more of its prefix.`);
  return live[0]!;
}

/** An input check's problem as the 400 naming the field. */
function checked<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof AdminInputError) throw new InvalidRequestError(error.message, { param: error.param });
    throw error;
  }
}

/** A store refusal (a name taken, nothing to change) as a 409. */
async function provisioned<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProvisioningError) throw new AdminConflictError(`${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`);
    throw error;
  }
}
