// Per-request values the route modules share: the request id, the authenticated caller, Node's request.
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { H3Event } from "h3";
import { bearerToken, type Caller } from "../gateway/auth/key-authenticator.js";
import { InternalError } from "../gateway/errors.js";
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

/** Node's request under the h3 event: uploads and forms stream from it directly. */
export function nodeRequest(event: H3Event): IncomingMessage {
  const request = (event.runtime as { node?: { req?: IncomingMessage } } | undefined)?.node?.req;
  if (!request) throw new InternalError("This endpoint needs the Node.js server.");
  return request;
}
