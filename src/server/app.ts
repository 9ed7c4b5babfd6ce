// The h3 app: request id on every response, one error renderer, one module per endpoint group.
import { H3 } from "h3";
import { RouteNotFoundError } from "../gateway/errors.js";
import type { Gateway } from "../gateway/gateway.js";
import type { AccessLog } from "./access-log.js";
import { ProviderHealth } from "./admin/provider-health.js";
import { type ErrorDialect, errorResponse } from "./render-error.js";
import { RequestCharges } from "./request-charges.js";
import { requestIdOf } from "./request-context.js";
import { type AdminEndpoint, registerAdmin } from "./routes/admin.js";
import { registerBatches } from "./routes/batches.js";
import { registerChatCompletions } from "./routes/chat-completions.js";
import { registerConsole } from "./routes/console.js";
import { EMBEDDINGS_PATH, registerEmbeddings } from "./routes/embeddings.js";
import { registerFiles } from "./routes/files.js";
import { READY_PATH, registerHealth } from "./routes/health.js";
import { KEY_PATH, registerKey } from "./routes/key.js";
import { MCP_PATH, registerMcp } from "./routes/mcp.js";
import { COUNT_TOKENS_PATH, MESSAGES_PATH, registerMessages } from "./routes/messages.js";
import { METRICS_PATH, type MetricsEndpoint, registerMetrics } from "./routes/metrics.js";
import { registerModels } from "./routes/models.js";
import { PROJECTS_PATH, registerProjects } from "./routes/projects.js";
import { RESPONSES_PATH, registerResponses } from "./routes/responses.js";
import { AUDIO_PATHS, IMAGE_PATHS, methodNotAllowed, registerOnFirstRequest, VISION_PATHS } from "./routes/route-groups.js";
import { registerSearch, SEARCH_PATHS } from "./routes/search.js";
import { isStoragePath, registerStorage } from "./routes/storage.js";
import { registerStorageLinks } from "./routes/storage-links.js";
import { registerVideo, VIDEO_PATHS } from "./routes/video.js";
import type { ServerDrain } from "./server-drain.js";
import { ServerShuttingDownError } from "./server-errors.js";
import type { ServerLogger } from "./server-logger.js";
import type { RequestTracing } from "./telemetry/request-tracing.js";

export function createApp(
  gateway: Gateway,
  logger: ServerLogger,
  accessLog?: AccessLog,
  metrics?: MetricsEndpoint,
  drain?: ServerDrain,
  /** What each request was charged, for its x-gw-credits (request-charges.ts); one the gateway does not tell charges nothing. */
  charges: RequestCharges = new RequestCharges(),
  admin: AdminEndpoint = { health: new ProviderHealth() },
  /** OpenTelemetry traces, when the config names a collector (telemetry/request-tracing.ts). */
  tracing?: RequestTracing,
): H3 {
  const app = new H3({
    silent: true,
    onError: (error, event) =>
      errorResponse(unwrap(error), requestIdOf(event), dialectOf(event.url.pathname), (cause) => logger.error(cause, requestIdOf(event))),
  });
  // Every response, errors included, carries the request id, and gets its access line.
  app.use((event) => {
    const requestId = requestIdOf(event);
    event.res.headers.set("x-request-id", requestId);
    accessLog?.begin(event, requestId);
    tracing?.begin(event, requestId);
    // SIGTERM: the requests in flight finish; new ones are told to come back (server-drain.ts).
    if (drain?.draining) throw new ServerShuttingDownError(drain.retryAfterSeconds());
  });
  registerHealth(app, gateway, logger);
  if (metrics) registerMetrics(app, gateway, metrics);
  registerChatCompletions(app, gateway, logger, charges);
  registerEmbeddings(app, gateway, charges);
  registerModels(app, gateway);
  registerKey(app, gateway);
  registerMessages(app, gateway, charges);
  registerResponses(app, gateway, logger, charges);
  // The media endpoints load on their first request (routes/route-groups.ts).
  registerOnFirstRequest(app, IMAGE_PATHS, async () => {
    const { registerImages } = await import("./routes/images.js");
    return (group) => registerImages(group, gateway, charges);
  });
  registerOnFirstRequest(app, VISION_PATHS, async () => {
    const { registerVision } = await import("./routes/vision.js");
    return (group) => registerVision(group, gateway, charges);
  });
  registerOnFirstRequest(app, AUDIO_PATHS, async () => {
    const { registerAudio } = await import("./routes/audio.js");
    return (group) => registerAudio(group, gateway, charges);
  });
  registerVideo(app, gateway);
  registerSearch(app, gateway, charges);
  registerProjects(app, gateway);
  registerMcp(app, gateway, logger, charges);
  registerStorage(app, gateway);
  registerFiles(app, gateway);
  registerBatches(app, gateway);
  registerStorageLinks(app, gateway);
  registerAdmin(app, gateway, logger, admin);
  registerConsole(app, gateway, logger, admin, accessLog?.recent);
  app.all("/**", (event) => {
    const known =
      [
        "/v1/chat/completions",
        EMBEDDINGS_PATH,
        "/v1/models",
        KEY_PATH,
        "/health",
        READY_PATH,
        METRICS_PATH,
        MESSAGES_PATH,
        COUNT_TOKENS_PATH,
        RESPONSES_PATH,
        PROJECTS_PATH,
        MCP_PATH,
        ...VIDEO_PATHS,
        ...SEARCH_PATHS,
      ].includes(event.url.pathname) ||
      /^\/v1\/video\/jobs\/[^/]+$/.test(event.url.pathname) ||
      /^\/v1\/responses\/[^/]+(?:\/input_items)?$/.test(event.url.pathname);
    throw known ? methodNotAllowed(event) : new RouteNotFoundError(`No endpoint at ${event.req.method} ${event.url.pathname}.`);
  });
  return app;
}

/** The messages endpoint (and anything under its prefix) answers errors in Anthropic's shape; storage in `{message}`. */
export function dialectOf(pathname: string): ErrorDialect {
  if (pathname.startsWith("/anthropic/")) return "messages";
  return isStoragePath(pathname) ? "storage" : "gateway";
}

/** h3 wraps thrown values in HTTPError; the original is its `cause`. */
function unwrap(error: unknown): unknown {
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined && cause !== null ? cause : error;
}
