// Who may use the admin API (docs/decisions.md §25). It is off — every /admin path answers 404 as
// an unknown one — until an admin token exists; it answers loopback and the ranges of
// admin.allowFrom only; it takes admin tokens only (an API key is refused with a message saying
// so); a read-only token may read and change nothing.
import type { H3Event } from "h3";
import { addressInRanges } from "../../config/address-ranges.js";
import { bearerToken } from "../../gateway/auth/key-authenticator.js";
import { AdminAddressRefusedError, AdminReadOnlyError, AdminTokenRequiredError, RouteNotFoundError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { ADMIN_TOKEN_PATTERN, adminEnabled, findAdminToken } from "../../store/admin-tokens.js";
import { KEY_PATTERN } from "../../store/api-keys.js";
import type { AdminTokenRecord } from "../../store/records.js";
import { isLoopbackAddress } from "../metrics-access.js";
import { nodeRequestOf } from "../request-context.js";

export interface AdminActor {
  token: AdminTokenRecord;
}

/** Methods that change nothing: a read-only token may use these. */
const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The client's address as the socket reports it. */
export function remoteAddressOf(event: H3Event): string {
  return nodeRequestOf(event)?.socket.remoteAddress ?? "";
}

/** Whether the admin API is on at all (a token exists); re-reads the store when another process changed it. */
export async function adminIsOn(gateway: Gateway): Promise<boolean> {
  await gateway.store.reloadIfChanged();
  return adminEnabled(gateway.store.data, Date.now());
}

/** Answer as if /admin did not exist unless an admin token does. */
export async function requireAdminOn(event: H3Event, gateway: Gateway): Promise<void> {
  if (!(await adminIsOn(gateway))) throw new RouteNotFoundError(`No endpoint at ${event.req.method} ${event.url.pathname}.`);
}

/**
 * The admin token of this request (the API being on), checked in this order: the address may
 * reach the API (403), a live admin token is presented (401), and it may do what the method does
 * (403 for a change by a read-only token). Kept on the event for the handlers.
 */
export function admitAdmin(event: H3Event, gateway: Gateway, peerAddress?: string): AdminActor {
  const presented = bearerToken(event.req.headers.get("authorization"));
  requireAdminAddress(event, gateway, peerAddress);
  const token = adminTokenFor(gateway, presented);
  actAsAdmin(event, token);
  if (!READ_METHODS.has(event.req.method) && token.readOnly) throw new AdminReadOnlyError(token.name);
  return { token };
}

/** 403 unless the client's address is loopback or in admin.allowFrom (the API's rule, and the console's). */
export function requireAdminAddress(event: H3Event, gateway: Gateway, peerAddress?: string): void {
  const address = peerAddress ?? remoteAddressOf(event);
  if (!isLoopbackAddress(address) && !addressInRanges(address, gateway.config.admin.allowFrom)) throw new AdminAddressRefusedError();
}

/** Keep the admin token a request acts as on the event (the console: its session's), for the handlers and the audit entry. */
export function actAsAdmin(event: H3Event, token: AdminTokenRecord): AdminActor {
  const actor = { token };
  (event.context as { admin?: AdminActor }).admin = actor;
  return actor;
}

/** The admin token this request presented, once recognised (also a read-only one refused a change). */
export function presentedAdminOf(event: H3Event): AdminActor | undefined {
  return (event.context as { admin?: AdminActor }).admin;
}

/** The admitted admin of this request. */
export function adminOf(event: H3Event): AdminActor {
  const actor = presentedAdminOf(event);
  if (!actor) throw new AdminTokenRequiredError();
  return actor;
}

function adminTokenFor(gateway: Gateway, presented: string | null): AdminTokenRecord {
  if (presented && KEY_PATTERN.test(presented))
    throw new AdminTokenRequiredError("An API key cannot open the admin API; send an admin token (`gw admin token create --name NAME`).");
  if (!presented || !ADMIN_TOKEN_PATTERN.test(presented)) throw new AdminTokenRequiredError();
  const token = findAdminToken(gateway.store.data, presented);
  if (!token || token.revokedAt !== null) throw new AdminTokenRequiredError("Invalid admin token.");
  if (token.expiresAt !== undefined && Date.parse(token.expiresAt) <= Date.now())
    throw new AdminTokenRequiredError(`This admin token expired at ${token.expiresAt}.`);
  return token;
}
