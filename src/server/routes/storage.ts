// The storage endpoints under /v1/storage (Bearer key, per-key rate limit). Every error on these
// paths renders as a bare `{message}` (docs/decisions.md §2; render-error.ts, "storage" dialect). Signed links are
// served by storage-links.ts.
import type { TLSSocket } from "node:tls";
import { type H3, type H3Event, HTTPResponse } from "h3";
import type { Caller } from "../../gateway/auth/key-authenticator.js";
import { MethodNotAllowedError, RouteNotFoundError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import type { StorageLimits } from "../../gateway/storage/storage-context.js";
import { FileNotFoundError } from "../../gateway/storage/storage-errors.js";
import { parseListQuery, parsePresignRequest } from "../../gateway/storage/storage-requests.js";
import { readJsonObject } from "../read-json-body.js";
import { admitCaller, nodeRequest } from "../request-context.js";
import { readMultipartFile } from "./storage-multipart.js";

const STORAGE_PREFIX = "/v1/storage";
/** Exact paths, for the app's 405 answer to other methods. */
export const STORAGE_PATHS = ["/v1/storage/upload", "/v1/storage/files", "/v1/storage/presigned-upload", "/v1/storage/quota"];
/**
 * The per-file upload limit (storage.maxFileBytes), sent with the quota so a client can refuse a
 * file before sending it. A header, so the quota body stays exactly `{data: StorageQuota}`.
 */
export const MAX_FILE_BYTES_HEADER = "x-service-max-file-bytes";
/** Beside the quota too, for the same reason: the counted operations this period (YYYY-MM, UTC) and the plan's limit. */
export const OPERATIONS_USED_HEADER = "x-service-storage-operations-used";
export const OPERATIONS_LIMIT_HEADER = "x-service-storage-operations-limit";
export const OPERATIONS_PERIOD_HEADER = "x-service-storage-period";
/** The presigned-upload body is a few small fields. */
const MAX_PRESIGN_BODY_BYTES = 64 * 1024;

export function isStoragePath(pathname: string): boolean {
  return pathname === STORAGE_PREFIX || pathname.startsWith(`${STORAGE_PREFIX}/`);
}

export function registerStorage(app: H3, gateway: Gateway): void {
  app.post("/v1/storage/upload", async (event) => {
    const { caller, limits } = await authorize(event, gateway);
    const session = await gateway.storage.startUpload(caller.agent.id, limits);
    try {
      await readMultipartFile(nodeRequest(event), gateway.config.storage.maxFileBytes, (file) => session.receive(file));
      const file = await session.commit();
      event.res.status = 201;
      return { data: file };
    } catch (error) {
      await session.abort();
      throw error;
    }
  });

  app.get("/v1/storage/files", async (event) => {
    const { caller } = await authorize(event, gateway);
    return gateway.storage.list(caller.agent.id, parseListQuery(event.url.searchParams));
  });

  app.get("/v1/storage/files/:id", async (event) => {
    const { caller } = await authorize(event, gateway);
    const link = await gateway.storage.downloadLink(caller.agent.id, fileIdOf(event), linkBaseUrl(event, gateway));
    return new HTTPResponse(null, { status: 302, headers: { location: link.url, "cache-control": "no-store" } });
  });

  app.get("/v1/storage/files/:id/url", async (event) => {
    const { caller } = await authorize(event, gateway);
    return { data: await gateway.storage.downloadLink(caller.agent.id, fileIdOf(event), linkBaseUrl(event, gateway)) };
  });

  app.delete("/v1/storage/files/:id", async (event) => {
    const { caller, limits } = await authorize(event, gateway);
    await gateway.storage.remove(caller.agent.id, limits, fileIdOf(event));
    return { message: "File deleted." };
  });

  app.post("/v1/storage/presigned-upload", async (event) => {
    const { caller, limits } = await authorize(event, gateway);
    const request = parsePresignRequest(await readJsonObject(event, MAX_PRESIGN_BODY_BYTES));
    return { data: await gateway.storage.presign(caller.agent.id, limits, request, linkBaseUrl(event, gateway)) };
  });

  app.get("/v1/storage/quota", async (event) => {
    const { caller, limits } = await authorize(event, gateway);
    event.res.headers.set(MAX_FILE_BYTES_HEADER, String(gateway.config.storage.maxFileBytes));
    const operations = await gateway.storage.operations(caller.agent.id, limits);
    event.res.headers.set(OPERATIONS_USED_HEADER, String(operations.used));
    event.res.headers.set(OPERATIONS_LIMIT_HEADER, String(operations.limit));
    event.res.headers.set(OPERATIONS_PERIOD_HEADER, operations.period);
    return { data: await gateway.storage.quota(caller.agent.id, limits) };
  });

  // Everything else under /v1/storage. A request whose raw path was under files/ (an id with
  // slashes, a traversal attempt that URL normalisation moved elsewhere ...) names no file: the
  // same 404 as a missing or foreign id, after the same authentication.
  app.all(`${STORAGE_PREFIX}/**`, async (event) => {
    const method = event.req.method;
    const rawPath = nodeRequest(event).url ?? event.url.pathname;
    if (/^\/v1\/storage\/files\//i.test(rawPath) && ["GET", "HEAD", "DELETE"].includes(method) && !STORAGE_PATHS.includes(event.url.pathname)) {
      await authorize(event, gateway);
      throw new FileNotFoundError();
    }
    if (STORAGE_PATHS.includes(event.url.pathname) || /^\/v1\/storage\/files\/[^/]+(?:\/url)?$/.test(event.url.pathname)) {
      throw new MethodNotAllowedError(`${method} is not allowed on ${event.url.pathname}.`);
    }
    throw new RouteNotFoundError(`No endpoint at ${method} ${event.url.pathname}.`);
  });
}

async function authorize(event: H3Event, gateway: Gateway): Promise<{ caller: Caller; limits: StorageLimits }> {
  const { caller, plan } = await admitCaller(event, gateway);
  return { caller, limits: plan.limits };
}

/** The raw id segment; the service looks up only well-formed ids of the caller's own agent. */
export function fileIdOf(event: H3Event): string {
  return (event.context as { params?: Record<string, string> }).params?.id ?? "";
}

/**
 * Where links point: `server.publicUrl` when configured, else the address this connection
 * reached the server on (its local socket address). Never the Host header, which the client
 * chooses.
 */
export function linkBaseUrl(event: H3Event, gateway: Gateway): string {
  const configured = gateway.config.server.publicUrl;
  if (configured) return configured.replace(/\/+$/, "");
  const socket = nodeRequest(event).socket;
  const address = (socket.localAddress ?? gateway.config.server.host).replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
  const port = socket.localPort ?? gateway.config.server.port;
  // A TLS socket (`gw serve --https`) has `encrypted`; links must use the scheme the client used.
  const scheme = (socket as Partial<TLSSocket>).encrypted ? "https" : "http";
  return `${scheme}://${address.includes(":") ? `[${address}]` : address}:${port}`;
}
