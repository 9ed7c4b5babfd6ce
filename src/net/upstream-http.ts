// The one HTTP client for upstream vendors: undici, pooled keep-alive connections per origin,
// with connect, first-byte (response headers) and idle-body timeouts, and the bounds of
// docs/decisions.md §4: one deadline for the whole call, the answer's last byte included, and a
// size cap per kind of answer, counted as the answer is read. Failures come back as
// UpstreamNetworkError / UpstreamHttpError so the gateway can decide on retry and fallback.
import { Agent, errors } from "undici";
import type { UpstreamSettings } from "../config/config-schema.js";
import { type AnswerKind, announcedTooLarge, answerLimit, unreadErrorBody } from "./answer-limits.js";
import { CallAbort } from "./call-deadline.js";
import { type AnswerHead, type AnswerSource, DispatchedAnswer } from "./dispatched-answer.js";
import { type Redact, redactNothing } from "./secret-redaction.js";
import { UpstreamBody } from "./upstream-body.js";
import { passthroughContentType } from "./upstream-content-type.js";
import { type NetworkFailure, UpstreamHttpError, UpstreamNetworkError } from "./upstream-errors.js";

export type { AnswerKind } from "./answer-limits.js";
export type { UpstreamBody } from "./upstream-body.js";

/** Where a request goes, split once when a provider is created (not parsed per request). */
export interface UpstreamTarget {
  origin: string;
  path: string;
}

export function upstreamTarget(url: string): UpstreamTarget {
  const parsed = new URL(url);
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

export interface UpstreamRequest {
  provider: string;
  target: UpstreamTarget;
  method?: "GET" | "POST" | "PUT" | "DELETE";
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal: AbortSignal;
  /** Applied to an error answer's body before anything else reads it (it may echo our key). */
  redact?: Redact;
  /** Overrides the settings' first-byte timeout for this request (a request's deadline is nearer). */
  firstByteTimeoutMs?: number;
  /** What the answer is: picks its size cap, `upstream.maxAnswerBytes[answer]` (none for a file). */
  answer: AnswerKind;
  /**
   * performance.now() by which the whole answer must be in, a stream's last byte included: the
   * request's deadline, which its attempts share. Default: `totalTimeoutMs` from now.
   */
  deadline?: number;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Read within the answer's cap and the call's deadline. */
  body: UpstreamBody;
}

export class UpstreamHttp {
  private readonly agents = new Map<string, Agent>();
  /** The agent for a settings object already seen: no key string built per request. */
  private agentBySettings = new WeakMap<UpstreamSettings, Agent>();

  /**
   * Send a request; resolves on a 2xx status, throws UpstreamHttpError otherwise. The deadline's
   * timer stays armed until the answer's last byte has come or it is dropped: the whole answer is bounded.
   */
  async send(upstream: UpstreamRequest, settings: UpstreamSettings): Promise<UpstreamResponse> {
    const { provider, answer } = upstream;
    const file = answer === "file";
    const deadline = file ? Number.POSITIVE_INFINITY : (upstream.deadline ?? performance.now() + settings.totalTimeoutMs);
    let answered = false;
    // The answer tells the call when it is over; the call aborts the answer (neither acts before dispatch).
    const dispatched = new DispatchedAnswer(() => call.release());
    const call = new CallAbort(
      upstream.signal,
      deadline,
      () => outOfTime(provider, upstream.target.origin, settings.totalTimeoutMs, answered),
      (reason) => dispatched.abort(reason),
    );
    let response: AnswerHead;
    try {
      this.agentFor(settings).dispatch(
        {
          origin: upstream.target.origin,
          path: upstream.target.path,
          method: upstream.method ?? "POST",
          headers: upstream.headers,
          body: upstream.body,
          headersTimeout: firstByteTimeout(upstream, settings, deadline),
        },
        dispatched,
      );
      response = await dispatched.head;
    } catch (error) {
      call.release();
      throw (
        call.failure ??
        toNetworkError(provider, error, upstream.signal, { origin: upstream.target.origin, settings, firstByteTimeoutMs: upstream.firstByteTimeoutMs })
      );
    }
    answered = true;
    const length = Number(headerValue(response.headers["content-length"]));
    if (response.status >= 200 && response.status < 300) {
      const fail = (error: Error) => call.fail(error);
      if (file) return { status: response.status, headers: response.headers, body: new UpstreamBody(dispatched, undefined, fail) };
      if (length > settings.maxAnswerBytes[answer]) {
        const error = announcedTooLarge(provider, answer, settings.maxAnswerBytes, length);
        fail(error);
        throw error;
      }
      return {
        status: response.status,
        headers: response.headers,
        body: new UpstreamBody(dispatched, answerLimit(provider, answer, settings.maxAnswerBytes), fail),
      };
    }
    const redact = upstream.redact ?? redactNothing;
    let text: string | undefined;
    try {
      text = await readErrorBody(dispatched, length, settings.maxAnswerBytes.error, call);
    } catch (error) {
      throw call.failure ?? toNetworkError(provider, error, upstream.signal);
    }
    const contentType = text === undefined ? "application/json" : passthroughContentType(headerValue(response.headers["content-type"]), redact);
    throw new UpstreamHttpError({
      provider,
      status: response.status,
      body: text === undefined ? unreadErrorBody(provider, response.status, settings.maxAnswerBytes) : redact(text),
      contentType,
      retryAfterMs: retryAfterMs(response.headers),
      request: { method: upstream.method ?? "POST", path: redact(upstream.target.path.split("?")[0] ?? "") },
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((agent) => agent.close()));
    this.agents.clear();
    this.agentBySettings = new WeakMap();
  }

  private agentFor(settings: UpstreamSettings): Agent {
    const known = this.agentBySettings.get(settings);
    if (known) return known;
    const key = `${settings.connectTimeoutMs}:${settings.firstByteTimeoutMs}:${settings.idleTimeoutMs}:${settings.connectionsPerOrigin}`;
    let agent = this.agents.get(key);
    if (!agent) {
      agent = new Agent({
        connect: { timeout: settings.connectTimeoutMs },
        connections: settings.connectionsPerOrigin,
        headersTimeout: settings.firstByteTimeoutMs,
        bodyTimeout: settings.idleTimeoutMs,
        keepAliveTimeout: 30_000,
      });
      this.agents.set(key, agent);
    }
    this.agentBySettings.set(settings, agent);
    return agent;
  }
}

/** An error answer's text; undefined when it is over its cap (announced or read), which is left unread. */
async function readErrorBody(source: AnswerSource, length: number, maxBytes: number, call: CallAbort): Promise<string | undefined> {
  const overCap = new Error("the error body passed its cap");
  if (length > maxBytes) {
    call.fail(overCap);
    return undefined;
  }
  try {
    return await new UpstreamBody(source, { maxBytes, passed: () => overCap }, (error) => call.fail(error)).text();
  } catch (error) {
    if (error === overCap) return undefined;
    throw error;
  }
}

/**
 * The first-byte timeout undici enforces: off (0) when the deadline comes first, whose timer then
 * ends the wait as a total_timeout; else the request's own (undefined: the agent's).
 */
function firstByteTimeout(upstream: UpstreamRequest, settings: UpstreamSettings, deadline: number): number | undefined {
  const wait = upstream.firstByteTimeoutMs ?? settings.firstByteTimeoutMs;
  return deadline - performance.now() <= wait ? 0 : upstream.firstByteTimeoutMs;
}

/** The request's total time ran out: before the answer began, or while it was still arriving. */
function outOfTime(provider: string, origin: string, totalTimeoutMs: number, answered: boolean): UpstreamNetworkError {
  const total = `the request's total time of ${totalTimeoutMs} ms (upstream.totalTimeoutMs)`;
  const where = hostAndPort(origin);
  const detail = answered ? `the answer from ${where} was still arriving when ${total} ran out` : `no answer from ${where} within ${total}`;
  return new UpstreamNetworkError(provider, "total_timeout", detail);
}

/** Where the request went and with which limits, to say what failed in words. */
export interface FailureScene {
  origin: string;
  settings: UpstreamSettings;
  firstByteTimeoutMs?: number;
}

/** Map undici's errors to what the gateway's retry rules care about, with the cause in words. */
export function toNetworkError(provider: string, error: unknown, signal?: AbortSignal, scene?: FailureScene): Error {
  if (signal?.aborted) return error instanceof Error ? error : new Error(String(error));
  if (error instanceof UpstreamNetworkError || error instanceof UpstreamHttpError) return error;
  const { failure, cause } = describeFailure(error, scene);
  return new UpstreamNetworkError(provider, failure, cause);
}

const DNS_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NONAME"]);
const UNREACHABLE_CODES = new Set(["EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN"]);

/** undici's error as a failure kind and a cause a person can act on (never a header or a key). */
function describeFailure(error: unknown, scene: FailureScene | undefined): { failure: NetworkFailure; cause: string } {
  const where = scene ? hostAndPort(scene.origin) : "the upstream";
  if (error instanceof errors.ConnectTimeoutError)
    return { failure: "connect_timeout", cause: `connect timeout to ${where}${scene ? ` after ${scene.settings.connectTimeoutMs} ms` : ""}` };
  if (error instanceof errors.HeadersTimeoutError) {
    const waited = scene?.firstByteTimeoutMs ?? scene?.settings.firstByteTimeoutMs;
    return { failure: "first_byte_timeout", cause: `no first byte from ${where}${waited ? ` within ${waited} ms` : ""}` };
  }
  if (error instanceof errors.BodyTimeoutError)
    return { failure: "idle_timeout", cause: `${where} went quiet mid-answer${scene ? ` for ${scene.settings.idleTimeoutMs} ms` : ""}` };
  const code = errorCode(error);
  if (code === "ECONNREFUSED") return { failure: "connect", cause: `connection refused by ${where}` };
  if (DNS_CODES.has(code)) return { failure: "connect", cause: `DNS lookup failed for ${scene ? new URL(scene.origin).hostname : "the upstream"} (${code})` };
  if (UNREACHABLE_CODES.has(code)) return { failure: "connect", cause: `${where} is unreachable (${code})` };
  if (code === "UND_ERR_CONNECT_TIMEOUT") return { failure: "connect_timeout", cause: `connect timeout to ${where}` };
  if (isTlsCode(code)) return { failure: "connect", cause: `TLS error with ${where} (${code})` };
  return { failure: "connection_lost", cause: `connection to ${where} lost${code ? ` (${code})` : ""}` };
}

/** The code of the error or of what caused it (undici wraps some socket errors). */
function errorCode(error: unknown): string {
  for (let current: unknown = error, depth = 0; current && depth < 4; current = (current as { cause?: unknown }).cause, depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === "string" && code !== "UND_ERR_SOCKET") return code;
  }
  return "";
}

function isTlsCode(code: string): boolean {
  return code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || code === "EPROTO" || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code);
}

function hostAndPort(origin: string): string {
  const url = new URL(origin);
  return `${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`;
}

/** The upstream's request id header, for tracing; it is upstream text, so it is redacted too. */
export function upstreamRequestIdOf(headers: UpstreamResponse["headers"], name: string, redact: Redact): string | undefined {
  const value = headerValue(headers[name]);
  return value === undefined ? undefined : redact(value);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function retryAfterMs(headers: Record<string, string | string[] | undefined>): number | undefined {
  const milliseconds = Number(headerValue(headers["retry-after-ms"]));
  if (Number.isFinite(milliseconds) && milliseconds >= 0 && headers["retry-after-ms"] !== undefined) return milliseconds;
  const value = headerValue(headers["retry-after"]);
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
