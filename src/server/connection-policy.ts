// What a client's request may make the server read, for every route at once (docs/decisions.md §2).
//
// Node keeps a connection alive after an answer by reading the rest of the request's body: when
// the response finishes, an unread request is resumed (IncomingMessage._dump in resOnFinish) so
// that the parser reaches the next request. An answer sent before the body arrived (401, 404,
// 413, 415 ...) therefore read an endless chunked body for ever. Such an answer says
// `Connection: close` instead, and Node then ends the socket as soon as the answer is written
// (resOnFinish: destroySoon), so at most what the socket buffers is read.
//
// A body that is slow is bounded by Node's own requestTimeout: the headers and the whole body
// must arrive within server.bodyTimeoutMs of the request's start (keep-alive idle time does not
// count, nor the time the answer takes); client-errors.ts answers the timeout with 408.
import { type IncomingMessage, type ServerOptions, ServerResponse } from "node:http";

export interface ConnectionState {
  /** The server is draining before it stops: every answer closes its connection. */
  readonly draining: boolean;
}

/** How often Node looks for requests past their deadline: each second, or more often for a deadline under 4 s. */
function checkingIntervalMs(bodyTimeoutMs: number): number {
  return Math.max(10, Math.min(1000, Math.floor(bodyTimeoutMs / 4)));
}

/** Options for `http.createServer` / `https.createServer`. */
export function connectionOptions(bodyTimeoutMs: number, state: ConnectionState): ServerOptions {
  return {
    ServerResponse: closingResponseClass(state),
    requestTimeout: bodyTimeoutMs,
    connectionsCheckingInterval: checkingIntervalMs(bodyTimeoutMs),
  };
}

/** Node's ServerResponse, closing the connection after an answer to a request whose body was not read to its end. */
function closingResponseClass(state: ConnectionState): typeof ServerResponse {
  return class ClosingResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
    // Every way of sending headers goes through writeHead (srvx calls it; Node's implicit headers too).
    override writeHead(...args: [statusCode: number, ...rest: unknown[]]): this {
      if (!this.headersSent && (state.draining || bodyUnread(this.req))) this.setHeader("connection", "close");
      return (super.writeHead as (...all: unknown[]) => this).apply(this, args);
    }
  };
}

/**
 * The request has a body and the parser has not reached its end. `complete` alone is not enough:
 * an answer made within the microtasks that follow the headers (GET /health) is written before
 * Node's parser has even seen the end of a request without a body.
 */
function bodyUnread(request: IncomingMessage): boolean {
  if (request.complete) return false;
  const length = request.headers["content-length"];
  return request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}
