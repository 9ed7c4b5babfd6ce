// Two local HTTP servers for tests that make the gateway download pictures: a "public" host
// (reached through the name pictures.test, which a fake DNS resolves to a public address) and an
// internal trap that stands in for every private or internal address. The fetcher handed to the
// gateway is the real SSRF-safe fetcher; only its DNS and the socket of a vetted public address
// are redirected to 127.0.0.1, so every refusal is decided by production code, and a test proves
// a refusal by the trap's counters staying at zero.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { UrlFetcher } from "../../src/gateway/media/picture-input.js";
import { type HostResolver, safeFetch } from "../../src/net/safe-fetch.js";

export const PUBLIC_PICTURE_ADDRESS = "93.184.215.14";

export interface PictureHosts {
  /** Base URL of the public host, `http://pictures.test:PORT`. */
  publicBase: string;
  /** Serve these bytes at a path of the public host (with a content type). */
  serve(path: string, bytes: Buffer, contentType?: string): void;
  /** Answer a path of the public host with a redirect. */
  redirect(path: string, location: string): void;
  /** Relay requests for unregistered paths under `prefix` (query kept) to `origin`, e.g. a fake vendor's clip URLs. */
  forward(prefix: string, origin: string): void;
  /** Requests the public host received. */
  publicHits: string[];
  /** The trap: requests and connections it got (must stay 0). */
  internal: { port: number; requests: string[]; connections: number };
  fetchUrl: UrlFetcher;
  close(): Promise<void>;
}

export async function startPictureHosts(): Promise<PictureHosts> {
  const files = new Map<string, { bytes: Buffer; contentType: string } | { location: string }>();
  const forwards = new Map<string, string>();
  const publicHits: string[] = [];
  const publicServer = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://x").pathname;
    publicHits.push(path);
    const entry = files.get(path);
    const forwardTo = entry ? undefined : [...forwards].find(([prefix]) => path.startsWith(prefix))?.[1];
    if (forwardTo) return void relay(`${forwardTo}${request.url ?? "/"}`, response);
    if (!entry) return void response.writeHead(404).end("not found");
    if ("location" in entry) return void response.writeHead(302, { location: entry.location }).end();
    response.writeHead(200, { "content-type": entry.contentType, "content-length": entry.bytes.length }).end(entry.bytes);
  });
  const internal = { port: 0, requests: [] as string[], connections: 0 };
  const internalServer = createServer((request, response) => {
    internal.requests.push(request.url ?? "/");
    response.writeHead(200, { "content-type": "image/png" }).end("secret");
  });
  internalServer.on("connection", () => {
    internal.connections += 1;
  });
  const publicPort = await listen(publicServer);
  internal.port = await listen(internalServer);

  const names: Record<string, string[]> = {
    "pictures.test": [PUBLIC_PICTURE_ADDRESS],
    localhost: ["127.0.0.1", "::1"],
    "intranet.test": ["10.1.2.3"],
    "metadata.test": ["169.254.169.254"],
    "rebind.test": [PUBLIC_PICTURE_ADDRESS, "127.0.0.1"],
  };
  const resolve: HostResolver = async (hostname) => {
    const addresses = names[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  const fetchUrl: UrlFetcher = (url, options) =>
    safeFetch(url, {
      ...options,
      resolve,
      // Only the vetted public address reaches the public server; anything else lands in the trap.
      unsafeConnectRedirect: ({ address }) => ({ address: "127.0.0.1", port: address === PUBLIC_PICTURE_ADDRESS ? publicPort : internal.port }),
    });

  return {
    publicBase: `http://pictures.test:${publicPort}`,
    serve(path, bytes, contentType = "application/octet-stream") {
      files.set(path, { bytes, contentType });
    },
    redirect(path, location) {
      files.set(path, { location });
    },
    forward(prefix, origin) {
      forwards.set(prefix, origin.replace(/\/+$/, ""));
    },
    publicHits,
    internal,
    fetchUrl,
    async close() {
      publicServer.closeAllConnections();
      internalServer.closeAllConnections();
      await Promise.all([new Promise((done) => publicServer.close(done)), new Promise((done) => internalServer.close(done))]);
    },
  };
}

/** GET `url` and answer with its status, content type and length, and its body streamed. */
async function relay(url: string, response: ServerResponse): Promise<void> {
  try {
    const upstream = await fetch(url);
    const headers: Record<string, string> = { "content-type": upstream.headers.get("content-type") ?? "application/octet-stream" };
    const length = upstream.headers.get("content-length");
    if (length !== null) headers["content-length"] = length;
    response.writeHead(upstream.status, headers);
    if (upstream.body) for await (const chunk of upstream.body) response.write(chunk);
    response.end();
  } catch {
    if (response.headersSent) response.destroy();
    else response.writeHead(502).end("relay failed");
  }
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}
