// The gateway takes one CallObserver; the server has several (the access log and its metrics, the
// credits each request is charged, and whoever else listens). This one tells each of them, in the
// order given, everything the gateway reports. Synchronous, as the gateway tells it: an observer
// that throws is a bug of that observer.
import type { RouteCandidate } from "../gateway/routing/route-resolver.js";
import type { AttemptOutcome, FailureCause } from "../gateway/upstream-calls/attempt-outcome.js";
import type { AttemptDetail, BatchLineEnd, CallObserver } from "../gateway/upstream-calls/call-observer.js";
import type { UsageRow } from "../store/usage-log.js";

export class CallObservers implements CallObserver {
  private readonly observers: readonly CallObserver[];

  constructor(observers: readonly CallObserver[]) {
    this.observers = [...observers];
  }

  attempted(requestId: string, provider: string, candidate?: RouteCandidate): void {
    for (const observer of this.observers) observer.attempted(requestId, provider, candidate);
  }

  billed(row: UsageRow): void {
    for (const observer of this.observers) observer.billed(row);
  }

  attemptEnded(provider: string, outcome: AttemptOutcome, durationMs: number, cause: FailureCause | undefined, detail: AttemptDetail): void {
    for (const observer of this.observers) observer.attemptEnded?.(provider, outcome, durationMs, cause, detail);
  }

  cacheMissed(requestId: string, endpoint: string): void {
    for (const observer of this.observers) observer.cacheMissed?.(requestId, endpoint);
  }

  batchLineBegan(requestId: string): void {
    for (const observer of this.observers) observer.batchLineBegan?.(requestId);
  }

  batchLineEnded(line: BatchLineEnd): void {
    for (const observer of this.observers) observer.batchLineEnded?.(line);
  }
}
