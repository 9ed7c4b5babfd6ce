// The gateway's Prometheus metrics, served by GET /metrics (routes/metrics.ts). Each server has
// its own registry, never prom-client's global one: several gateways run in one test process.
// Requests are counted as they finish (access-log.ts sees every one), upstream attempts and usage
// rows as the gateway reports them (call-observer.ts), and what is a state rather than an event
// (storage, video jobs, circuits, requests in flight) is read when scraped, costing nothing per
// request. Labels are endpoint templates, provider, model and plan names, and fixed words: never
// a key, a key prefix, a prompt or an agent's name (docs/decisions.md §12). prom-client, and the
// process metrics it collects (event loop, GC, memory), start at the first scrape: a server nobody
// scrapes never loads it (docs/decisions.md §28).
import type { ServerResponse } from "node:http";
import type { H3Event } from "h3";
import type { Registry } from "prom-client";
import { AgentPlanNames } from "../gateway/agent-plan-names.js";
import type { Gateway } from "../gateway/gateway.js";
import type { AttemptOutcome, FailureCause } from "../gateway/upstream-calls/attempt-outcome.js";
import { BATCH_STATUSES } from "../store/batch-records.js";
import type { UsageRow } from "../store/usage-log.js";
import type { VideoJobStatus } from "../store/video-jobs.js";
import { type GaugeSetter, type PromClientModule, ReadGauge, type ScrapedMetric, SeriesCounter, SeriesHistogram } from "./metric-series.js";
import { ModelLabels, OTHER_MODEL } from "./model-labels.js";

/** The label of a request no endpoint matched (app.ts's catch-all `/**`): one value for every unknown path. */
export const UNMATCHED_ROUTE = "unmatched";

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const WRITE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const CIRCUIT_STATES = ["closed", "open", "half-open"] as const;
const VIDEO_STATES: readonly VideoJobStatus[] = ["QUEUED", "SUBMITTED", "SUCCEEDED", "FAILED", "CANCELLED"];

export interface MetricsScrape {
  contentType: string;
  body: string;
}

export class ServerMetrics {
  /** Every metric of this server's, registered with prom-client when the first scrape loads it. */
  private readonly metrics: ScrapedMetric[] = [];
  /** prom-client and this server's registry, from the first scrape on. */
  private scraping: { prom: PromClientModule; registry: Registry } | undefined;
  /** Responses not yet closed: in flight, and (headers sent, body not finished) streaming. */
  private readonly open = new Set<ServerResponse>();
  private modelLabels: ModelLabels | null = null;
  private planNames: AgentPlanNames | null = null;

  private readonly requests = this.counter(
    "gw_http_requests_total",
    "HTTP requests by method, endpoint (route template) and status; 499 when the client went away first",
    ["method", "route", "status"],
  );
  private readonly requestSeconds = this.latencyHistogram(
    "gw_http_request_duration_seconds",
    "Time from a request's arrival to its response's end (a stream's last frame), by method and endpoint",
    ["method", "route"],
  );
  private readonly attempts = this.counter("gw_upstream_attempts_total", "Upstream attempts begun, by provider (retries and fallbacks each count)", [
    "provider",
  ]);
  private readonly attemptSeconds = this.latencyHistogram(
    "gw_upstream_attempt_duration_seconds",
    "Time of one upstream attempt until its answer began (or it failed), by provider and outcome (ok, upstream_error, failed, abandoned)",
    ["provider", "outcome"],
  );
  private readonly failures = this.counter(
    "gw_upstream_failures_total",
    "Failed upstream attempts by provider and cause (connect, connect_timeout, first_byte_timeout, idle_timeout, total_timeout, connection_lost, invalid_response, answer_too_large, http_429, http_5xx, http_4xx, upstream_auth, no_endpoint, other)",
    ["provider", "cause"],
  );
  private readonly tokens = this.counter(
    "gw_tokens_total",
    "Tokens billed, by model, plan and type (the usage row's unit without _tokens: prompt, completion, cached, cache_write, input)",
    ["model", "plan", "type"],
  );
  private readonly credits = this.counter("gw_credits_total", "Credits billed, by model and plan", ["model", "plan"]);
  private readonly overage = this.counter(
    "gw_billing_overage_credits_total",
    "Credits an upstream's usage came to beyond what its calls held, not billed (the usage rows' overage), by provider",
    ["provider"],
  );
  private readonly cacheHits = this.counter("gw_cache_hits_total", "Answers the response cache replayed, by endpoint", ["endpoint"]);
  private readonly cacheMisses = this.counter("gw_cache_misses_total", "Requests the response cache was asked for and had no answer to, by endpoint", [
    "endpoint",
  ]);
  private readonly usageWriteSeconds = this.added(
    new SeriesHistogram({ name: "gw_usage_log_write_duration_seconds", help: "Time of one group write of usage rows to the usage log" }, WRITE_BUCKETS),
  );
  private readonly usageWriteFailures = this.counter(
    "gw_usage_log_write_failures_total",
    "Group writes to the usage log that failed (their requests answered with an error)",
    [],
  );

  constructor() {
    const open = this.open;
    this.gauge("gw_http_requests_in_flight", "Requests whose response has not closed yet", () => open.size);
    this.gauge("gw_http_open_streams", "Responses streaming their body now (headers sent, body not finished): SSE streams, downloads", () => {
      let streaming = 0;
      for (const response of open) if (response.headersSent && !response.writableEnded) streaming += 1;
      return streaming;
    });
  }

  /** Read the gateway's state when scraped, and hear its usage-log writes. */
  observe(gateway: Gateway): void {
    this.planNames = new AgentPlanNames(gateway.store, () => gateway.config);
    this.modelLabels = new ModelLabels(() => gateway.config);
    if (gateway.state.usageLog)
      gateway.state.usageLog.onWrite = (durationMs, failed) => {
        if (failed) this.usageWriteFailures.inc(1);
        else this.usageWriteSeconds.observe(durationMs / 1000);
      };
    this.labelledGauge(
      "gw_upstream_circuit_state",
      "Circuit breaker state by provider: 1 for the state it is in (closed, open, half-open), 0 for the others",
      ["provider", "state"],
      (set) => {
        for (const provider of Object.keys(gateway.config.providers)) {
          const current = gateway.breakers.state(provider);
          for (const state of CIRCUIT_STATES) set(state === current ? 1 : 0, { provider, state });
        }
      },
    );
    this.gauge(
      "gw_storage_files",
      "Stored files over every agent (uploads announced and not yet received included)",
      async () => (await gateway.storage.totals()).files,
    );
    this.gauge("gw_storage_bytes", "Bytes of the stored files over every agent", async () => (await gateway.storage.totals()).bytes);
    this.gauge("gw_cache_entries", "Answers the response cache keeps, over every agent", async () => (await gateway.cache.totals()).entries);
    this.gauge("gw_cache_bytes", "Bytes of the answers the response cache keeps, over every agent", async () => (await gateway.cache.totals()).bytes);
    this.labelledGauge("gw_batches", "Batches kept by the gateway, by status", ["status"], async (set) => {
      const counts = await gateway.state.batches.countByStatus();
      for (const status of BATCH_STATUSES) set(counts.get(status) ?? 0, { status });
    });
    this.labelledGauge("gw_video_jobs", "Video jobs kept by the gateway, by state", ["state"], async (set) => {
      const counts = await gateway.videoJobs.countByStatus();
      for (const state of VIDEO_STATES) set(counts.get(state) ?? 0, { state });
    });
  }

  requestBegan(response: ServerResponse): void {
    this.open.add(response);
  }

  requestEnded(response: ServerResponse, method: string, route: string, status: number, durationMs: number): void {
    this.open.delete(response);
    this.requests.inc(1, method, route, status);
    this.requestSeconds.observe(durationMs / 1000, method, route);
  }

  cacheMissed(endpoint: string): void {
    this.cacheMisses.inc(1, endpoint);
  }

  attempted(provider: string): void {
    this.attempts.inc(1, provider);
  }

  attemptEnded(provider: string, outcome: AttemptOutcome, durationMs: number, cause?: FailureCause): void {
    this.attemptSeconds.observe(durationMs / 1000, provider, outcome);
    if (cause) this.failures.inc(1, provider, cause);
  }

  billed(row: UsageRow): void {
    const model = this.modelLabels?.labelOf(row.model) ?? OTHER_MODEL;
    const plan = this.planNames?.nameOf(row.agent) ?? "free";
    this.credits.inc(row.credits, model, plan);
    if (row.overage !== undefined && row.overage > 0) this.overage.inc(row.overage, row.provider);
    // A replayed answer spent no tokens upstream: its units name the call it repeats.
    if (row.cached) {
      this.cacheHits.inc(1, row.endpoint);
      return;
    }
    for (const [unit, count] of Object.entries(row.units)) {
      const type = tokenType(unit);
      if (type !== null && count >= 0) this.tokens.inc(count, model, plan, type);
    }
  }

  /** Kept for the registry; registered at once when a scrape has built it already. */
  private added<T extends ScrapedMetric>(metric: T): T {
    this.metrics.push(metric);
    if (this.scraping) metric.register(this.scraping.registry, this.scraping.prom);
    return metric;
  }

  private counter(name: string, help: string, labelNames: readonly string[]): SeriesCounter {
    return this.added(new SeriesCounter({ name, help, labelNames }));
  }

  private latencyHistogram(name: string, help: string, labelNames: readonly string[]): SeriesHistogram {
    return this.added(new SeriesHistogram({ name, help, labelNames }, LATENCY_BUCKETS));
  }

  /** A gauge without labels whose value is read when scraped. */
  private gauge(name: string, help: string, read: () => number | Promise<number>): void {
    this.added(new ReadGauge({ name, help }, async (set) => set(await read())));
  }

  /** A gauge whose series are all set when scraped (its other series dropped). */
  private labelledGauge(name: string, help: string, labelNames: readonly string[], read: (set: GaugeSetter) => void | Promise<void>): void {
    this.added(new ReadGauge({ name, help, labelNames }, read));
  }

  /** The text exposition: this server's metrics and the process's (CPU, memory, event loop, GC). */
  async scrape(): Promise<MetricsScrape> {
    if (!this.scraping) {
      const prom = await import("prom-client");
      const registry = new prom.Registry();
      for (const metric of this.metrics) metric.register(registry, prom);
      this.scraping ??= { prom, registry };
    }
    const { prom, registry } = this.scraping;
    const merged = prom.Registry.merge([registry, processRegistry(prom)]);
    return { contentType: merged.contentType, body: await merged.metrics() };
  }
}

const tokenTypes = new Map<string, string | null>();

/** `prompt` for the unit `prompt_tokens`; null for a unit that counts no tokens (images, seconds ...). Cached: called per row. */
function tokenType(unit: string): string | null {
  let type = tokenTypes.get(unit);
  if (type === undefined) {
    type = unit.endsWith("_tokens") ? unit.slice(0, -"_tokens".length) : null;
    tokenTypes.set(unit, type);
  }
  return type;
}

/** The request's endpoint as registered (`/v1/storage/files/:id`), never the raw path with its ids. */
export function routeLabel(event: H3Event): string {
  const route = event.context.matchedRoute?.route;
  return route === undefined || route === "/**" ? UNMATCHED_ROUTE : route;
}

let processMetrics: Registry | undefined;

/**
 * Node's default metrics, once per process (they describe the process, whichever gateway asks),
 * from the first scrape on: the GC and event-loop histograms hold what happened since then.
 */
function processRegistry(prom: PromClientModule): Registry {
  if (!processMetrics) {
    processMetrics = new prom.Registry();
    prom.collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}
