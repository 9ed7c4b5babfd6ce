// One audit entry per admin call (docs/decisions.md §25), written when its response closes: the
// token that made it (once recognised), the method and path (never the query or the body), what a
// change did and to what, the status and the client's address. A failed write is logged, never
// turned into the call's failure: the call has already answered.
import type { H3Event } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import { nodeResponseOf, requestIdOf } from "../request-context.js";
import type { ServerLogger } from "../server-logger.js";
import { presentedAdminOf, remoteAddressOf } from "./admin-access.js";

interface AuditFacts {
  action?: string;
  target?: string;
}

const factsOf = new WeakMap<H3Event, AuditFacts>();

/** Start the audit entry of an admin call; it is appended when the response closes. */
export function auditAdminCall(event: H3Event, gateway: Gateway, logger: ServerLogger): void {
  const response = nodeResponseOf(event);
  if (!response) return;
  const facts: AuditFacts = {};
  factsOf.set(event, facts);
  const requestId = requestIdOf(event);
  const { method } = event.req;
  const path = event.url.pathname;
  const remote = remoteAddressOf(event);
  response.once("close", () => {
    const { action, target } = facts;
    const token = presentedAdminOf(event)?.token;
    gateway.state.audit
      .append({
        time: new Date().toISOString(),
        requestId,
        ...(token ? { actor: { id: token.id, name: token.name, prefix: token.prefix } } : {}),
        method,
        path,
        status: response.writableEnded ? response.statusCode : 499,
        remote,
        ...(action === undefined ? {} : { action }),
        ...(target === undefined ? {} : { target }),
      })
      .catch((error: unknown) => logger.error(error, requestId));
  });
}

/** What a change did (`keys.create`) and to what (an id or name). */
export function auditAction(event: H3Event, action: string, target: string): void {
  const facts = factsOf.get(event);
  if (!facts) return;
  facts.action = action;
  facts.target = target;
}
