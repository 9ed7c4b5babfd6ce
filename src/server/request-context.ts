// Per-request values the route modules share: the request id and the authenticated caller.
import { randomUUID } from "node:crypto";
import type { H3Event } from "h3";
import { bearerToken, type Caller } from "../gateway/auth/key-authenticator.js";
import type { Gateway } from "../gateway/gateway.js";

// Unique per process start (random) and per request (a counter): cheaper than a UUID per request.
const processPrefix = `req_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
let requestCounter = 0;

export function requestIdOf(event: H3Event): string {
  const context = event.context as { requestId?: string };
  context.requestId ??= `${processPrefix}${(requestCounter++).toString(36).padStart(6, "0")}`;
  return context.requestId;
}

export async function authenticateBearer(event: H3Event, gateway: Gateway): Promise<Caller> {
  return gateway.authenticator.authenticate(bearerToken(event.req.headers.get("authorization")));
}
