// What a client's request may make the server read, for every route at once (docs/decisions.md §2).
//
// Node keeps a connection alive after an answer by reading the rest of the request's body: when
// the response finishes, an unread request is resumed (IncomingMessage._dump in resOnFinish) so
// that the parser reaches the next request. An answer sent before the body arrived (401, 404,
// 413, 415 ...) therefore read an endless chunked body for ever. Such an answer says
// `Connection: close` instead, and the connection ends once the answer is written.
//
// Not at once, though: closing a socket with unread bytes, or taking more after closing, makes
// the kernel send a reset, and a client still sending its body (an SDK posting 30 MB) loses the
// answer it had not read yet and reports a connection error instead of the 413. So the close
// lingers, as nginx's lingering_close does: the answer and a FIN go out, what still arrives is
// discarded for a short while (LINGER_MS, at most LINGER_BYTES, until the client closes), and
// only then is the socket destroyed.
//
// A body that is slow is bounded by Node's own requestTimeout: the headers and the whole body
// must arrive within server.bodyTimeoutMs of the request's start (keep-alive idle time does not
// count, nor the time the answer takes); client-errors.ts answers the timeout with 408.
import { type IncomingMessage, type ServerOptions, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** How long, and for how many bytes, a closing connection still takes what the client sends. */
const LINGER_MS = 2_000;
const LINGER_BYTES = 8 * 1024 * 1024;

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
      if (!this.headersSent) {
        const unread = bodyUnread(this.req);
        if (state.draining || unread) this.setHeader("connection", "close");
        if (unread && this.socket) lingerOnClose(this.socket);
      }
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

/**
 * Make Node's close after this answer (resOnFinish calls `socket.destroySoon()` for a response
 * marked last) a lingering one: end our side once the answer is flushed, discard what still
 * arrives (the parser is already dumping the unread body), destroy at the first of the client's
 * own close, LINGER_BYTES more, or LINGER_MS.
 */
function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function lingeringClose(this: Socket): void {
    const start = this.bytesRead;
    const stop = () => {
      clearTimeout(timer);
      this.off("data", counted);
      this.destroy();
    };
    const counted = () => {
      if (this.bytesRead - start > LINGER_BYTES) stop();
    };
    const timer = setTimeout(stop, LINGER_MS).unref();
    this.on("data", counted);
    this.once("end", stop);
    this.once("close", () => clearTimeout(timer));
    if (this.writable) this.end();
  };
}
