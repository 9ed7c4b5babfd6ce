// Per-request values the route modules share: the request id, the authenticated caller, Node's request.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { H3Event } from "h3";
import type { PlanLimits } from "../config/config-schema.js";
import { bearerToken, type Caller } from "../gateway/auth/key-authenticator.js";
import type { DeferredAdmission } from "../gateway/auth/rate-limiter.js";
import { InternalError, RateLimitExceededError } from "../gateway/errors.js";
import type { Gateway } from "../gateway/gateway.js";
import { parseTagsHeader, TAGS_HEADER } from "../gateway/request-tags.js";
import { setRateLimitHeaders } from "./rate-limit-headers.js";

// Unique per process start (random) and per request (a counter): cheaper than a UUID per request.
const processPrefix = `req_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
let requestCounter = 0;

/** Node's requests by the id they got, for an answer made outside h3 (client-errors.ts's 408). */
const requestIds = new WeakMap<IncomingMessage, string>();

export function newRequestId(): string {
  return `${processPrefix}${(requestCounter++).toString(36).padStart(6, "0")}`;
}

export function requestIdOf(event: H3Event): string {
  const context = event.context as { requestId?: string };
  if (context.requestId === undefined) {
    context.requestId = newRequestId();
    const request = nodeRequestOf(event);
    if (request) requestIds.set(request, context.requestId);
  }
  return context.requestId;
}

/** The id a Node request was given by requestIdOf, if it reached the app. */
export function requestIdOfNodeRequest(request: IncomingMessage): string | undefined {
  return requestIds.get(request);
}

export interface AdmittedCaller {
  caller: Caller;
  plan: { name: string; limits: PlanLimits };
}

/**
 * Authenticate the key (Bearer, or `presented` when the endpoint takes another header), count the
 * request against its rate limits (429 when over) and report them in x-ratelimit-* headers, which
 * every answer to this request carries, errors included.
 */
export async function admitCaller(event: H3Event, gateway: Gateway, presented = bearerToken(event.req.headers.get("authorization"))): Promise<AdmittedCaller> {
  const caller = rememberCaller(event, await gateway.authenticator.authenticate(presented));
  const plan = gateway.planOf(caller);
  try {
    setRateLimitHeaders(event.res.headers, await gateway.takeRateLimit(caller, plan.limits));
  } catch (error) {
    if (error instanceof RateLimitExceededError) setRateLimitHeaders(event.res.headers, error.admission);
    throw error;
  }
  return { caller, plan };
}

export interface DeferredCaller extends AdmittedCaller {
  /** The request's rate take, left for its credit hold; `admission.around` runs the handler. */
  admission: DeferredAdmission;
}

/**
 * admitCaller for a metered call (chat, messages, responses, embeddings): the key is
 * authenticated now, and its request counted by the call's credit hold in the same step (one
 * round trip to a shared store for both), or on its own if the handler fails before. The handler
 * runs inside `admission.around`, so a request over its limit still answers 429 first.
 */
export async function admitCallerWithHold(
  event: H3Event,
  gateway: Gateway,
  presented = bearerToken(event.req.headers.get("authorization")),
): Promise<DeferredCaller> {
  const caller = rememberCaller(event, await gateway.authenticator.authenticate(presented));
  const plan = gateway.planOf(caller);
  const admission = gateway.deferRateLimit(caller, plan.limits, (state) => setRateLimitHeaders(event.res.headers, state));
  return { caller, plan, admission };
}

/** The request's `x-gw-tags` (400 when one is malformed), undefined when it has none. */
export function headerTagsOf(event: H3Event): string[] | undefined {
  return parseTagsHeader(event.req.headers.get(TAGS_HEADER));
}

export async function authenticateBearer(event: H3Event, gateway: Gateway): Promise<Caller> {
  return rememberCaller(event, await gateway.authenticator.authenticate(bearerToken(event.req.headers.get("authorization"))));
}

/** Keep the authenticated caller on the event, for the access log. */
export function rememberCaller(event: H3Event, caller: Caller): Caller {
  (event.context as { caller?: Caller }).caller = caller;
  return caller;
}

export function callerOf(event: H3Event): Caller | undefined {
  return (event.context as { caller?: Caller }).caller;
}

/** Node's request under the h3 event, when the server is Node's. */
export function nodeRequestOf(event: H3Event): IncomingMessage | undefined {
  return (event.runtime as { node?: { req?: IncomingMessage } } | undefined)?.node?.req;
}

/** Node's response under the h3 event, when the server is Node's. */
export function nodeResponseOf(event: H3Event): ServerResponse | undefined {
  return (event.runtime as { node?: { res?: ServerResponse } } | undefined)?.node?.res;
}

/** Node's request under the h3 event: uploads and forms stream from it directly. */
export function nodeRequest(event: H3Event): IncomingMessage {
  const request = nodeRequestOf(event);
  if (!request) throw new InternalError("This endpoint needs the Node.js server.");
  return request;
}

const connectionSignals = new WeakMap<Socket, AbortSignal>();

/**
 * Aborts when the client goes away: one signal per connection, not per request. HTTP/1.1 carries
 * one request at a time on a connection, so the connection closing is exactly the in-flight
 * request's client going away, and a keep-alive connection serves thousands of requests with
 * one signal. Why: on Node 20 creating an AbortSignal costs about 6 µs (Node 22 about 0.2), a
 * measurable share of a chat request. Whoever listens must stop listening when its request
 * ends (undici and the retry sleep do).
 */
export function clientGoneSignal(event: H3Event): AbortSignal {
  const socket = nodeRequestOf(event)?.socket;
  if (!socket) return event.req.signal;
  let signal = connectionSignals.get(socket);
  if (!signal) {
    const controller = new AbortController();
    socket.once("close", () => controller.abort(new DOMException("The client closed the connection.", "AbortError")));
    signal = controller.signal;
    connectionSignals.set(socket, signal);
  }
  return signal;
}
