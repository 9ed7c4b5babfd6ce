// Errors the HTTP server itself raises about a connection or a request's body, rendered like
// every other error by render-error.ts (docs/decisions.md §2).
import { apiError } from "../gateway/errors.js";

const CLOSE = { connection: "close" };

/** The request (headers and body) did not arrive within `server.bodyTimeoutMs`. */
export class RequestTimeoutError extends apiError(408, "invalid_request_error", "request_timeout") {
  constructor(timeoutMs: number) {
    super(`The request was not received in full within ${timeoutMs} ms (server.bodyTimeoutMs).`);
    this.headers = CLOSE;
  }
}

/** A multipart form with more parts, fields or files than the endpoint reads. */
export class TooManyPartsError extends apiError(413, "invalid_request_error", "too_many_parts") {}

/** A request that arrived while the server drains its in-flight requests before it stops (SIGTERM). */
export class ServerShuttingDownError extends apiError(503, "server_error", "server_shutting_down") {
  constructor(retryAfterSeconds: number) {
    super(`The server is shutting down and takes no new requests; retry in ${retryAfterSeconds} s.`);
    this.headers = { ...CLOSE, "retry-after": String(retryAfterSeconds) };
  }
}
