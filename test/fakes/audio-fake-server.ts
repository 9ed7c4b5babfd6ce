/**
 * The scaffold the fake audio vendors share: an HTTP server on 127.0.0.1 port 0, a persistent
 * behaviour plus one-shot behaviours consumed in order, the requests it recorded, and the common
 * switches (wait before answering, drop the connection). Each fake supplies its handler.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface CommonBehaviour {
  firstByteDelayMs?: number; // wait before writing response headers
  dropConnection?: boolean; // destroy the socket without answering
}

export interface FakeServer<Behaviour, Recorded> {
  url: string;
  requests: Recorded[];
  set(behaviour: Behaviour): void; // the persistent behaviour (replaces the previous one)
  enqueue(...behaviours: Behaviour[]): void; // one-shot behaviours, consumed in order by the next requests
  reset(): void; // clears requests, queue and the persistent behaviour (back to the start options)
  close(): Promise<void>;
}

export interface Exchange<Behaviour> {
  request: http.IncomingMessage;
  response: http.ServerResponse;
  body: Buffer;
  url: URL;
  behaviour: Behaviour;
  /** 1, 2, 3 ... per request, for request ids. */
  sequence: number;
}

export function startFakeServer<Behaviour extends CommonBehaviour, Recorded>(
  initial: Behaviour,
  /** The URL the fake reports, from its origin (`/v1` for OpenAI). */
  urlPath: string,
  handle: (exchange: Exchange<Behaviour>, requests: Recorded[]) => Promise<void>,
  crashed: (response: http.ServerResponse, error: unknown) => void,
): Promise<FakeServer<Behaviour, Recorded>> {
  const requests: Recorded[] = [];
  const queue: Behaviour[] = [];
  let persistent: Behaviour = { ...initial };
  let sequence = 0;

  const server = http.createServer((request, response) => {
    sequence += 1;
    const exchange = { request, response, url: new URL(request.url ?? "/", "http://127.0.0.1"), sequence };
    readBody(request)
      .then((body) => handle({ ...exchange, body, behaviour: queue.shift() ?? persistent }, requests))
      .catch((error: unknown) => {
        if (!response.headersSent) crashed(response, error);
        else response.destroy();
      });
  });

  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}${urlPath}`,
        requests,
        set: (behaviour) => (persistent = { ...behaviour }),
        enqueue: (...behaviours) => queue.push(...behaviours),
        reset: () => {
          requests.length = 0;
          queue.length = 0;
          persistent = { ...initial };
        },
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Applies the common switches; true when the connection was dropped (answer nothing more). */
export async function interrupted(exchange: Exchange<CommonBehaviour>): Promise<boolean> {
  const { behaviour, request } = exchange;
  if (behaviour.firstByteDelayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.firstByteDelayMs));
  if (!behaviour.dropConnection) return false;
  request.socket.destroy();
  return true;
}

export function sendJson(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
  response.end(text);
}

export function sendBytes(response: http.ServerResponse, contentType: string, bytes: Buffer | string, headers: Record<string, string> = {}): void {
  response.writeHead(200, { "content-type": contentType, "content-length": String(Buffer.byteLength(bytes)), ...headers });
  response.end(bytes);
}

/** The query as one value per name (the last one, as most servers read it). */
export function queryOf(url: URL): Record<string, string> {
  return Object.fromEntries(url.searchParams.entries());
}

function readBody(request: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}
