// The query parameters the admin API's lists share: `?agent=` (a name or id) and `?limit=`.
import type { H3Event } from "h3";
import { AdminNotFoundError, InvalidRequestError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import type { AgentRecord } from "../../store/records.js";

const LIST_LIMIT_MAX = 1000;

/** Every agent, or the one `?agent=` names (404 when it names none). */
export function agentsOf(event: H3Event, gateway: Gateway): AgentRecord[] {
  const named = event.url.searchParams.get("agent");
  const agents = gateway.store.data.agents;
  if (named === null) return agents;
  const agent = agents.find((candidate) => candidate.name === named || candidate.id === named);
  if (!agent) throw new AdminNotFoundError(`No agent "${named}".`);
  return [agent];
}

/** A parameter of the route's path, decoded. */
export function pathParam(event: H3Event, name: string): string {
  const value = event.context.params?.[name];
  if (value === undefined) throw new InvalidRequestError(`Missing ${name} in the path.`);
  return decodeURIComponent(value);
}

/** `?limit=`, 1 to 1000, 100 when absent. */
export function listLimit(event: H3Event): number {
  const text = event.url.searchParams.get("limit") ?? "100";
  const limit = Number(text);
  if (!/^\d+$/.test(text) || limit < 1 || limit > LIST_LIMIT_MAX)
    throw new InvalidRequestError(`Invalid 'limit': expected a whole number from 1 to ${LIST_LIMIT_MAX}.`, { param: "limit" });
  return limit;
}
