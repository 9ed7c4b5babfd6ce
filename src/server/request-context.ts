// Per-request values the route modules share: the request id and the authenticated caller.
import { randomUUID } from "node:crypto";
import type { H3Event } from "h3";
import { bearerToken, type Caller } from "../gateway/auth/key-authenticator.js";
import type { Gateway } from "../gateway/gateway.js";

export function requestIdOf(event: H3Event): string {
  const context = event.context as { requestId?: string };
  context.requestId ??= `req_${randomUUID().replaceAll("-", "")}`;
  return context.requestId;
}

export async function authenticateBearer(event: H3Event, gateway: Gateway): Promise<Caller> {
  return gateway.authenticator.authenticate(bearerToken(event.req.headers.get("authorization")));
}
