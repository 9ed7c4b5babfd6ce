// One span per request and one child span per upstream attempt, exported over OTLP/HTTP
// (docs/decisions.md §26). Loaded only when the config names a collector (request-tracing.ts).
//
// The request's span (SERVER) starts in the app's first middleware, as a child of the caller's
// W3C `traceparent` when it sent one, and ends when its response closes, a stream's after its
// last frame: error status for a 5xx or a stream that broke after its 200. A model call's span is
// named `{gen_ai.operation.name} {gen_ai.request.model}` and carries the GenAI conventions'
// model, provider and token attributes; any other request's `{method} {route}`. Each upstream
// attempt's span (CLIENT) is named `{operation} {upstream model}` and says how the attempt ended.
// What the gateway reports arrives by request id, as the access log's facts do. Never a key, a
// prompt or an answer: the key's prefix only, and the prompt only when the operator opted in.
import { type Attributes, type Context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type TextMapGetter, type Tracer, trace } from "@opentelemetry/api";
import { setGlobalErrorHandler, W3CTraceContextPropagator } from "@opentelemetry/core";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
} from "@opentelemetry/semantic-conventions";
import type { H3Event } from "h3";
import type { RouteCandidate } from "../../gateway/routing/route-resolver.js";
import type { AttemptOutcome, FailureCause } from "../../gateway/upstream-calls/attempt-outcome.js";
import type { AttemptDetail } from "../../gateway/upstream-calls/call-observer.js";
import type { UsageRow } from "../../store/usage-log.js";
import { routeLabel, UNMATCHED_ROUTE } from "../metrics.js";
import { watchJsonBody } from "../read-json-body.js";
import { callerOf, nodeResponseOf } from "../request-context.js";
import { answerBroke } from "../sse-response.js";
import { inputContent } from "./captured-content.js";
import { GEN_AI, type GenAiOperation, GW, operationOfPath, providerNameOf, unitAttributes } from "./gen-ai-conventions.js";
import { type OtlpSettings, otlpExporter } from "./otlp-exporter.js";
import type { RequestTracing, TracingOptions } from "./request-tracing.js";

/** The longest attribute value exported (a captured prompt is cut there). */
const ATTRIBUTE_VALUE_LIMIT = 64 * 1024;
/** A collector that keeps failing is said so at most this often. */
const EXPORT_WARNING_INTERVAL_MS = 60_000;

interface RequestSpan {
  span: Span;
  /** The context the attempts' spans are children in. */
  context: Context;
  operation?: GenAiOperation;
  /** The model the request named, else the one its first attempt served as. */
  requestModel?: string;
  /** The model of its last usage row: the one that answered. */
  responseModel?: string;
  providerType?: string;
  provider?: string;
  attempts: number;
  /** Attempts begun and not yet ended, oldest first. */
  open: Array<{ provider: string; span: Span }>;
  rows: number;
  credits: number;
  units: Record<string, number>;
  cache?: "hit" | "miss";
}

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

export class RequestTracer implements RequestTracing {
  private readonly requests = new Map<string, RequestSpan>();
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly addresses = new Map<string, Attributes>();
  private exportWarned = Number.NEGATIVE_INFINITY;

  private constructor(
    private readonly provider: BasicTracerProvider,
    private readonly tracer: Tracer,
    private readonly options: TracingOptions,
  ) {}

  static async start(options: TracingOptions & { otlp: OtlpSettings }): Promise<RequestTracer> {
    const exporter = await otlpExporter(options.otlp);
    // The environment's OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES win over the config, as in every OpenTelemetry SDK.
    const resource = defaultResource()
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.settings.serviceName, [ATTR_SERVICE_VERSION]: options.version }))
      .merge(detectResources({ detectors: [envDetector] }));
    // Batched: a request costs its spans' making and a queue push; the OTEL_BSP_* variables tune the batches.
    const provider = new BasicTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(exporter)],
      spanLimits: { attributeValueLengthLimit: ATTRIBUTE_VALUE_LIMIT },
    });
    const tracer = new RequestTracer(provider, provider.getTracer("gw", options.version), options);
    // The SDK reports a failed export here (one handler per process: the last tracer started sets it).
    setGlobalErrorHandler((error) => tracer.warnExport(error));
    return tracer;
  }

  /** A failed export, said at most once a minute: a collector that is down fails every batch. */
  private warnExport(error: unknown): void {
    if (performance.now() - this.exportWarned < EXPORT_WARNING_INTERVAL_MS) return;
    this.exportWarned = performance.now();
    this.options.warn(`telemetry: spans not exported to the collector: ${error instanceof Error ? error.message : String(error)}`);
  }

  begin(event: H3Event, requestId: string): void {
    const response = nodeResponseOf(event);
    if (!response) return;
    const method = event.req.method;
    const path = event.url.pathname;
    const parent = this.propagator.extract(ROOT_CONTEXT, event.req.headers, headerGetter);
    const span = this.tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: method,
          [ATTR_URL_PATH]: path,
          [ATTR_URL_SCHEME]: event.url.protocol.replace(/:$/, ""),
          [GW.requestId]: requestId,
        },
      },
      parent,
    );
    const request: RequestSpan = { span, context: trace.setSpan(ROOT_CONTEXT, span), attempts: 0, open: [], rows: 0, credits: 0, units: {} };
    const operation = operationOfPath(path);
    request.operation = operation?.operation;
    if (operation?.outputType) span.setAttribute(GEN_AI.outputType, operation.outputType);
    this.requests.set(requestId, request);
    const capture = this.options.settings.captureContent;
    watchJsonBody(event, (body) => {
      if (typeof body.model === "string") request.requestModel ??= body.model;
      if (body.stream === true) span.setAttribute(GEN_AI.requestStream, true);
      if (capture) span.setAttributes(inputContent(body));
    });
    response.once("close", () => {
      this.requests.delete(requestId);
      // An attempt the gateway does not time (a web search's) ends with its request.
      for (const attempt of request.open) attempt.span.end();
      const caller = callerOf(event);
      if (caller) span.setAttributes({ [GW.agent]: caller.agent.name, [GW.keyPrefix]: caller.key.prefix });
      const route = routeLabel(event);
      if (route !== UNMATCHED_ROUTE) span.setAttribute(ATTR_HTTP_ROUTE, route);
      if (response.headersSent) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, response.statusCode);
      if (!response.writableEnded) span.setAttribute(GW.clientGone, true);
      if (response.statusCode >= 500) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute(ATTR_ERROR_TYPE, String(response.statusCode));
      } else if (answerBroke(response)) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: "the stream broke after its first byte" });
        span.setAttribute(ATTR_ERROR_TYPE, "stream_broken");
      }
      this.describeCall(span, request);
      span.updateName(this.nameOf(request, method, route));
      span.end();
    });
  }

  attempted(requestId: string, provider: string, candidate?: RouteCandidate): void {
    const request = this.requests.get(requestId);
    if (!request) return;
    request.attempts += 1;
    request.requestModel ??= candidate?.publicModel;
    const described = this.options.providers(provider);
    const attributes: Attributes = { [GW.provider]: provider, ...this.addressOf(described?.baseUrl) };
    if (described) attributes[GEN_AI.providerName] = providerNameOf(described.type);
    if (request.operation) attributes[GEN_AI.operation] = request.operation;
    if (candidate) attributes[GEN_AI.requestModel] = candidate.upstreamModel;
    const name = `${request.operation ?? "upstream"} ${candidate?.upstreamModel ?? provider}`;
    request.open.push({ provider, span: this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, request.context) });
    request.provider = provider;
    request.providerType = described?.type;
  }

  attemptEnded(provider: string, outcome: AttemptOutcome, _durationMs: number, cause: FailureCause | undefined, detail: AttemptDetail): void {
    const request = this.requests.get(detail.requestId);
    const index = request?.open.findIndex((attempt) => attempt.provider === provider) ?? -1;
    if (!request || index < 0) return;
    const { span } = request.open.splice(index, 1)[0]!;
    span.setAttribute(GW.attemptOutcome, outcome);
    if (detail.status !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, detail.status);
    if (cause !== undefined) span.setAttribute(GW.attemptCause, cause);
    if (outcome === "failed" || outcome === "upstream_error") {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute(ATTR_ERROR_TYPE, cause ?? String(detail.status ?? "upstream_error"));
    }
    span.end();
  }

  billed(row: UsageRow): void {
    const request = this.requests.get(row.requestId);
    if (!request) return;
    request.rows += 1;
    request.credits += row.credits;
    request.responseModel = row.model;
    if (row.provider !== request.provider) {
      request.provider = row.provider;
      request.providerType = this.options.providers(row.provider)?.type;
    }
    if (row.cached) request.cache = "hit";
    for (const [name, count] of Object.entries(row.units)) request.units[name] = (request.units[name] ?? 0) + count;
  }

  cacheMissed(requestId: string): void {
    const request = this.requests.get(requestId);
    if (request) request.cache = "miss";
  }

  /** The last spans exported (a collector that refuses them is logged: the server stops all the same). */
  async shutdown(): Promise<void> {
    await this.provider.shutdown().catch((error: unknown) => this.warnExport(error));
  }

  /** What the gateway reported of the request, on its span. */
  private describeCall(span: Span, request: RequestSpan): void {
    if (!this.calledModel(request)) return;
    const attributes: Attributes = { [GW.attempts]: request.attempts, ...unitAttributes(request.units) };
    if (request.operation) attributes[GEN_AI.operation] = request.operation;
    if (request.requestModel) attributes[GEN_AI.requestModel] = request.requestModel;
    if (request.responseModel) attributes[GEN_AI.responseModel] = request.responseModel;
    if (request.provider) attributes[GW.provider] = request.provider;
    if (request.providerType) attributes[GEN_AI.providerName] = providerNameOf(request.providerType);
    if (request.rows > 0) attributes[GW.credits] = request.credits;
    if (request.cache) attributes[GW.cache] = request.cache;
    span.setAttributes(attributes);
  }

  /** `{operation} {model}` for a model call (semantic conventions for GenAI); `{method} {route}` otherwise (for HTTP). */
  private nameOf(request: RequestSpan, method: string, route: string): string {
    if (request.operation && this.calledModel(request)) {
      const model = request.requestModel ?? request.responseModel;
      return model ? `${request.operation} ${model}` : request.operation;
    }
    return route === UNMATCHED_ROUTE ? method : `${method} ${route}`;
  }

  private calledModel(request: RequestSpan): boolean {
    return request.attempts > 0 || request.rows > 0;
  }

  /** server.address and server.port of a provider's configured base URL (none for a vendor's default address). */
  private addressOf(baseUrl: string | undefined): Attributes {
    if (!baseUrl) return {};
    let address = this.addresses.get(baseUrl);
    if (!address) {
      try {
        const url = new URL(baseUrl);
        address = { [ATTR_SERVER_ADDRESS]: url.hostname, [ATTR_SERVER_PORT]: Number(url.port) || (url.protocol === "https:" ? 443 : 80) };
      } catch {
        address = {};
      }
      this.addresses.set(baseUrl, address);
    }
    return address;
  }
}
