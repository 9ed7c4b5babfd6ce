// Listen on the configured (or given) host and port, with the bounds on what a client may make the
// server read (connection-policy.ts, client-errors.ts); on shutdown, drain in-flight requests and
// streams (server-drain.ts) before closing connections.

import { createServer, type Server } from "node:http";
import type { Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "h3/node";
import type { StateInput } from "../config/config-schema.js";
import { initHome, isInitialised } from "../config/init-home.js";
import { homePaths } from "../config/paths.js";
import { gwVersion } from "../config/project-root.js";
import { Gateway } from "../gateway/gateway.js";
import type { UrlFetcher } from "../gateway/media/picture-input.js";
import { AccessLog } from "./access-log.js";
import { ProviderHealth } from "./admin/provider-health.js";
import { createApp, dialectOf } from "./app.js";
import { CallObservers } from "./call-observers.js";
import { answerClientErrors } from "./client-errors.js";
import { connectionOptions } from "./connection-policy.js";
import { ServerMetrics } from "./metrics.js";
import { errorResponse } from "./render-error.js";
import { RequestCharges } from "./request-charges.js";
import { newRequestId, requestIdOfNodeRequest } from "./request-context.js";
import { ServerDrain } from "./server-drain.js";
import { createServerLogger, type LogFormat, type LogLevel, type ServerLogger } from "./server-logger.js";
import { startTracing, TracingObserver } from "./telemetry/request-tracing.js";
import type { TlsOptions } from "./tls-setup.js";

export interface RunningServer {
  url: string;
  gateway: Gateway;
  /** Answer new requests 503, wait for in-flight ones (up to the drain timeout), then stop listening and close. */
  shutdown(): Promise<void>;
}

export interface StartOptions {
  home: string;
  host?: string;
  port?: number;
  logger?: ServerLogger;
  /** Test seam: how user-supplied URLs are fetched (default: the SSRF-safe fetcher). */
  fetchUrl?: UrlFetcher;
  /** Test seam: the circuit breakers' clock (milliseconds, monotonic). */
  clock?: () => number;
  /** Test seam: the wall clock of signed links and upload expiries (epoch milliseconds). */
  now?: () => number;
  logLevel?: LogLevel;
  logFormat?: LogFormat;
  /** Serve HTTPS instead of HTTP (docs/decisions.md §13). */
  tls?: TlsOptions;
  /** Test seam: GET /metrics treats every client as remote, so that tests reach its token check. */
  metricsPeersRemote?: boolean;
  /** Test seam: the admin API sees every client at this address (tests connect from loopback only). */
  adminPeerAddress?: string;
  /** Test seam until the config file chooses it: where the shared state lives (Gateway's `state` option). */
  state?: StateInput;
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const logger = options.logger ?? createServerLogger({ level: options.logLevel, format: options.logFormat });
  const metrics = new ServerMetrics();
  const accessLog = new AccessLog(logger, metrics);
  const charges = new RequestCharges();
  // Every observer of the gateway's calls hears every report, in this order.
  const health = new ProviderHealth();
  const tracing = new TracingObserver();
  const observers = new CallObservers([accessLog, charges, health, tracing]);
  // A home that was never set up starts on the embedded defaults; an initialised home with
  // missing or corrupt data refuses to start (Gateway.open throws).
  if (!isInitialised(options.home)) await initHome(options.home);
  const gateway = await Gateway.open(homePaths(options.home), logger, {
    fetchUrl: options.fetchUrl,
    clock: options.clock,
    now: options.now,
    observer: observers,
    state: options.state,
  });
  // OpenTelemetry is loaded only when the config names a collector (docs/decisions.md §26).
  tracing.tracer = await startTracing({
    settings: gateway.config.telemetry,
    providers: (name) => (Object.hasOwn(gateway.config.providers, name) ? gateway.config.providers[name] : undefined),
    version: gwVersion(),
    warn: (message) => logger.warn(message),
  }).catch(async (error: unknown) => {
    await gateway.close();
    throw error;
  });
  gateway.watch();
  metrics.observe(gateway);
  const drain = new ServerDrain();
  const app = createApp(
    gateway,
    logger,
    accessLog,
    { metrics, treatPeersAsRemote: options.metricsPeersRemote },
    drain,
    charges,
    {
      health,
      peerAddress: options.adminPeerAddress,
    },
    tracing.tracer,
  );
  const host = options.host ?? gateway.config.server.host;
  // Loaded only for HTTPS: the certificate generator costs about 17 MB and 80 ms a plain start never needs.
  const tls = options.tls
    ? await import("./tls-setup.js")
        .then(({ prepareTls }) => prepareTls(options.tls!, gateway.paths, host, new Date(options.now?.() ?? Date.now()), logger))
        .catch(async (error: unknown) => {
          await gateway.close();
          throw error;
        })
    : null;
  const { bodyTimeoutMs } = gateway.config.server;
  const serverOptions = connectionOptions(bodyTimeoutMs, drain);
  const server = tls ? tls.createServer(toNodeHandler(app), serverOptions) : createServer(serverOptions, toNodeHandler(app));
  server.keepAliveTimeout = 65_000;
  server.on("request", (_request, response) => drain.track(response));
  answerClientErrors(server, bodyTimeoutMs, (error, response) => {
    const request = response?.req;
    const requestId = (request && requestIdOfNodeRequest(request)) ?? newRequestId();
    const dialect = request ? dialectOf((request.url ?? "/").split("?", 1)[0]!) : "gateway";
    return errorResponse(error, requestId, dialect, (cause) => logger.error(cause, requestId));
  });
  const port = options.port ?? gateway.config.server.port;
  await listen(server, host, port);
  const address = server.address() as AddressInfo;
  const url = `${tls ? "https" : "http"}://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;

  let closing: Promise<void> | null = null;
  const shutdown = () => {
    closing ??= (async () => {
      tls?.stopWatching();
      // Still listening: a new request is answered 503 with Retry-After until the drain ends.
      const drained = drain.drain(gateway.config.server.drainTimeoutMs);
      server.closeIdleConnections();
      await drained;
      server.close();
      server.closeAllConnections();
      await gateway.close();
      // The spans of the requests just drained, exported before the process exits.
      await tracing.tracer?.shutdown();
      logger.flush?.();
    })();
    return closing;
  };
  return { url, gateway, shutdown };
}

function listen(server: Server | HttpsServer, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
