// An error answered by the gateway (or a failure to reach it), with the server's own message.
import { isObject } from "../json/json-values.js";

export class GwApiError extends Error {
  constructor(
    message: string,
    /** HTTP status; 0 when the server could not be reached or the body was not understood. */
    readonly status: number,
    readonly type?: string,
    readonly code?: string,
    readonly requestId?: string,
    /** The decoded error body, when there was one. */
    readonly body?: unknown,
  ) {
    super(message);
    this.name = "GwApiError";
  }

  /** Seconds the gateway asked to wait (Retry-After on a 429), when it said. */
  retryAfterSeconds?: number;
}

/**
 * The message of an error body in any of the gateway's shapes: `{error:{message,type,code}}`
 * (chat and tools), `{message}` (storage), `{type:"error",error:{type,message}}` (messages format).
 */
export function errorFromBody(body: unknown, status: number, requestId?: string): GwApiError | undefined {
  if (!isObject(body)) return undefined;
  const inner = body.error;
  if (isObject(inner) && typeof inner.message === "string") {
    return new GwApiError(inner.message, status, stringOrUndefined(inner.type), stringOrUndefined(inner.code), requestId, body);
  }
  if (typeof inner === "string") return new GwApiError(inner, status, undefined, undefined, requestId, body);
  if (typeof body.message === "string") {
    return new GwApiError(body.message, status, stringOrUndefined(body.type), stringOrUndefined(body.code), requestId, body);
  }
  return undefined;
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A 200 whose body is not the answer this call expects. */
export function unexpectedAnswer(what: string, body: unknown): GwApiError {
  return new GwApiError(`unexpected ${what} answer from the gateway`, 200, undefined, undefined, undefined, body);
}

/** Why a request never got an answer, in a word where the system has one (ECONNREFUSED ...). */
export function networkReason(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause;
    if (isObject(cause) && typeof cause.code === "string") return cause.code;
    if (cause instanceof Error) return cause.message;
    return error.message;
  }
  return String(error);
}
