// What Node's HTTP server reports about a connection rather than a request (its 'clientError'
// event), answered in the documented envelope instead of Node's bare status lines: a request not
// received in full within server.bodyTimeoutMs (Node's requestTimeout) is 408, a request Node
// cannot parse 400 (431 for headers too large, 413 for chunk extensions too large), as Node would
// answer them; then the connection is closed, which aborts the request in flight on it (its body
// readers fail, an upload's temp file is removed). A request timed out while the app reads its
// body is answered through its own response, so its access line and metrics say 408; the answer
// carries the request's id and its endpoint's error dialect either way.
import type { Server, ServerResponse } from "node:http";
import type { Server as HttpsServer } from "node:https";
import type { Duplex } from "node:stream";
import type { HTTPResponse } from "h3";
import { type GatewayError, MalformedRequestError } from "../gateway/errors.js";
import { RequestTimeoutError } from "./server-errors.js";

/** Renders an error for the request of `response`, or for a connection without a request when undefined. */
export type ClientErrorRenderer = (error: GatewayError, response: ServerResponse | undefined) => HTTPResponse;

export function answerClientErrors(server: Server | HttpsServer, bodyTimeoutMs: number, render: ClientErrorRenderer): void {
  // The response of the request each connection is on: Node gives the event only the socket.
  const responses = new WeakMap<Duplex, ServerResponse>();
  server.on("request", (request, response) => responses.set(request.socket, response));
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    const response = responses.get(socket);
    const pending = response && !response.writableEnded ? response : undefined;
    if (error.code === "ECONNRESET" || !socket.writable || pending?.headersSent) {
      socket.destroy();
      return;
    }
    const refusal = refusalOf(error, bodyTimeoutMs);
    const answer = render(refusal, pending);
    if (pending && refusal instanceof RequestTimeoutError) answerThrough(pending, answer);
    else answerOnSocket(socket, answer);
  });
}

function refusalOf(error: NodeJS.ErrnoException, bodyTimeoutMs: number): GatewayError {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new RequestTimeoutError(bodyTimeoutMs);
    case "HPE_HEADER_OVERFLOW":
      return new MalformedRequestError(431, "The request's headers are too large.");
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return new MalformedRequestError(413, "The request's chunk extensions are too large.");
    default:
      return new MalformedRequestError(400, "The request is not valid HTTP.");
  }
}

/** Through the request's own response, then the request is ended as a client's abort would end it. */
function answerThrough(response: ServerResponse, answer: HTTPResponse): void {
  // The route may still try to answer once its body read fails: Node reports that late write as
  // an error on the response, which nobody else listens to.
  response.on("error", () => undefined);
  // A finished response takes its request off the connection's list, so closing the connection
  // would no longer abort it: the reader of its body would wait for ever.
  response.once("finish", () => response.req.destroy());
  const body = bodyOf(answer);
  response.writeHead(answer.status ?? 500, { ...Object.fromEntries(answer.headers), "content-length": Buffer.byteLength(body), connection: "close" });
  response.end(body);
}

function answerOnSocket(socket: Duplex, answer: HTTPResponse): void {
  const status = answer.status ?? 500;
  const body = bodyOf(answer);
  const headers = { ...Object.fromEntries(answer.headers), "content-length": String(Buffer.byteLength(body)), connection: "close" };
  const head = [`HTTP/1.1 ${status} `, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)].join("\r\n");
  socket.end(`${head}\r\n\r\n${body}`, () => socket.destroy());
}

/** The renderer's bodies are JSON text. */
function bodyOf(answer: HTTPResponse): string {
  return typeof answer.body === "string" ? answer.body : "";
}
