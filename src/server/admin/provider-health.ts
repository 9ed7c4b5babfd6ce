// What the admin API says of each provider's health (docs/decisions.md §25): its circuit breaker's
// state, and from this instance's last attempts on it their p50 and p99 durations and the latest
// failures. Fed by the gateway's CallObserver (attemptEnded), held in memory: a window, not a history.
import type { AttemptOutcome, FailureCause } from "../../gateway/upstream-calls/attempt-outcome.js";
import type { CallObserver } from "../../gateway/upstream-calls/call-observer.js";

/** Attempts per provider the percentiles are taken over. */
const WINDOW = 500;
/** Failures per provider listed. */
const FAILURES_KEPT = 20;

export interface ProviderFailure {
  time: string;
  outcome: AttemptOutcome;
  cause?: FailureCause;
  durationMs: number;
}

export interface ProviderHealthFigures {
  attempts: number;
  failures: number;
  p50Ms: number | null;
  p99Ms: number | null;
  recentFailures: ProviderFailure[];
}

interface Window {
  durations: number[];
  outcomes: boolean[];
  next: number;
  failures: ProviderFailure[];
}

export class ProviderHealth implements CallObserver {
  private readonly windows = new Map<string, Window>();

  /** Attempts are counted when they end. */
  attempted(): void {}

  /** Usage rows say nothing of a provider's health. */
  billed(): void {}

  attemptEnded(provider: string, outcome: AttemptOutcome, durationMs: number, cause?: FailureCause): void {
    let window = this.windows.get(provider);
    if (!window) {
      window = { durations: [], outcomes: [], next: 0, failures: [] };
      this.windows.set(provider, window);
    }
    // An abandoned attempt (the client left) says nothing of the provider: timed, not a failure.
    const succeeded = outcome === "ok" || outcome === "abandoned";
    window.durations[window.next] = durationMs;
    window.outcomes[window.next] = succeeded;
    window.next = (window.next + 1) % WINDOW;
    if (succeeded) return;
    window.failures.unshift({ time: new Date().toISOString(), outcome, ...(cause === undefined ? {} : { cause }), durationMs: Math.round(durationMs) });
    window.failures.length = Math.min(window.failures.length, FAILURES_KEPT);
  }

  figures(provider: string): ProviderHealthFigures {
    const window = this.windows.get(provider);
    if (!window) return { attempts: 0, failures: 0, p50Ms: null, p99Ms: null, recentFailures: [] };
    const sorted = [...window.durations].sort((a, b) => a - b);
    return {
      attempts: sorted.length,
      failures: window.outcomes.filter((succeeded) => !succeeded).length,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      recentFailures: [...window.failures],
    };
  }
}

/** Nearest-rank percentile of sorted durations, in whole milliseconds. */
function percentile(sorted: number[], share: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(share * sorted.length));
  return Math.round(sorted[rank - 1]!);
}
