// OpenTelemetry traces, as the rest of the server sees them (docs/decisions.md §26). Nothing here
// loads OpenTelemetry: `startTracing` imports it (request-tracer.ts) only when the config names a
// collector, so a gateway without traces pays nothing for them at start or per request.
import type { H3Event } from "h3";
import type { TelemetrySettings } from "../../config/config-schema.js";
import type { RouteCandidate } from "../../gateway/routing/route-resolver.js";
import type { AttemptOutcome, FailureCause } from "../../gateway/upstream-calls/attempt-outcome.js";
import type { AttemptDetail, CallObserver } from "../../gateway/upstream-calls/call-observer.js";
import type { UsageRow } from "../../store/usage-log.js";

export interface RequestTracing extends CallObserver {
  /** Start the request's span (app.ts, with its access line); it ends when the response closes. */
  begin(event: H3Event, requestId: string): void;
  /** Export the spans not yet sent, then stop (after the drain, before the process exits). */
  shutdown(): Promise<void>;
}

/** What the traces say of a provider: its type (the vendor) and where it is, when configured. */
export type ProviderLookup = (name: string) => { type: string; baseUrl?: string } | undefined;

export interface TracingOptions {
  settings: TelemetrySettings;
  providers: ProviderLookup;
  /** gw's version (service.version). */
  version: string;
  /** Where a failed export is told (the server's log). */
  warn: (message: string) => void;
}

/** The tracer the config asks for, or none when it names no collector. */
export async function startTracing(options: TracingOptions): Promise<RequestTracing | undefined> {
  const otlp = options.settings.otlp;
  if (!otlp?.endpoint) return undefined;
  const { RequestTracer } = await import("./request-tracer.js");
  return RequestTracer.start({ ...options, otlp: { ...otlp, endpoint: otlp.endpoint } });
}

/**
 * Stands among the gateway's observers, which are fixed before the config is read, and tells the
 * tracer what the gateway reports once there is one: without traces, a call that does nothing.
 */
export class TracingObserver implements CallObserver {
  tracer: RequestTracing | undefined;

  attempted(requestId: string, provider: string, candidate?: RouteCandidate): void {
    this.tracer?.attempted(requestId, provider, candidate);
  }

  attemptEnded(provider: string, outcome: AttemptOutcome, durationMs: number, cause: FailureCause | undefined, detail: AttemptDetail): void {
    this.tracer?.attemptEnded?.(provider, outcome, durationMs, cause, detail);
  }

  billed(row: UsageRow): void {
    this.tracer?.billed(row);
  }

  cacheMissed(requestId: string, endpoint: string): void {
    this.tracer?.cacheMissed?.(requestId, endpoint);
  }
}
