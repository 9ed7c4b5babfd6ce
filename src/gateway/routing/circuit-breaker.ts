// One circuit breaker per provider. After `failureThreshold` consecutive failed attempts the
// circuit opens: requests skip the provider (the next route serves, or the caller gets a 503
// naming it) instead of spending three attempts each on an upstream that is down. After
// `cooldownMs` one request goes through as a probe (half-open); its success closes the circuit,
// its failure opens it for another cool-down. Any success closes it.

export interface BreakerSettings {
  /** Consecutive failed attempts that open the circuit; 0 never opens it. */
  breakerFailureThreshold: number;
  breakerCooldownMs: number;
}

export type BreakerState = "closed" | "open" | "half-open";

export type Admission = { allowed: true; probe: boolean } | { allowed: false; retryInMs: number };

export type BreakerChange = (provider: string, state: BreakerState, detail: string) => void;

interface Circuit {
  state: BreakerState;
  consecutiveFailures: number;
  openedAt: number;
  probeInFlight: boolean;
}

export class CircuitBreakers {
  private readonly circuits = new Map<string, Circuit>();

  constructor(
    private readonly onChange: BreakerChange = () => {},
    /** Milliseconds on a monotonic clock; tests pass their own. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  state(provider: string): BreakerState {
    return this.circuits.get(provider)?.state ?? "closed";
  }

  /** May an attempt go to this provider now? While half-open, only the one probe may. */
  admit(provider: string, settings: BreakerSettings): Admission {
    const circuit = this.circuits.get(provider);
    if (!circuit || circuit.state === "closed") return ALLOWED;
    const waited = this.now() - circuit.openedAt;
    if (circuit.state === "open") {
      if (waited < settings.breakerCooldownMs) return { allowed: false, retryInMs: settings.breakerCooldownMs - waited };
      this.change(provider, circuit, "half-open", `cool-down of ${settings.breakerCooldownMs} ms over; one probe request goes through`);
    }
    if (circuit.probeInFlight) return { allowed: false, retryInMs: Math.max(0, settings.breakerCooldownMs - waited) };
    circuit.probeInFlight = true;
    return PROBE;
  }

  succeeded(provider: string): void {
    const circuit = this.circuits.get(provider);
    if (!circuit) return;
    circuit.consecutiveFailures = 0;
    circuit.probeInFlight = false;
    if (circuit.state !== "closed") this.change(provider, circuit, "closed", "an attempt succeeded");
  }

  failed(provider: string, admission: Admission, reason: string, settings: BreakerSettings): void {
    if (settings.breakerFailureThreshold === 0) return;
    let circuit = this.circuits.get(provider);
    if (!circuit) {
      circuit = { state: "closed", consecutiveFailures: 0, openedAt: 0, probeInFlight: false };
      this.circuits.set(provider, circuit);
    }
    circuit.consecutiveFailures += 1;
    if (admission.allowed && admission.probe) {
      circuit.probeInFlight = false;
      circuit.openedAt = this.now();
      this.change(provider, circuit, "open", `the probe failed (${reason}); next probe in ${settings.breakerCooldownMs} ms`);
    } else if (circuit.state === "closed" && circuit.consecutiveFailures >= settings.breakerFailureThreshold) {
      circuit.openedAt = this.now();
      this.change(
        provider,
        circuit,
        "open",
        `${circuit.consecutiveFailures} consecutive failed attempts (last: ${reason}); requests skip it for ${settings.breakerCooldownMs} ms`,
      );
    }
  }

  /** An attempt that ended neither way (the client went away, the request was refused before the call). */
  abandoned(provider: string, admission: Admission): void {
    const circuit = this.circuits.get(provider);
    if (circuit && admission.allowed && admission.probe) circuit.probeInFlight = false;
  }

  private change(provider: string, circuit: Circuit, state: BreakerState, detail: string): void {
    circuit.state = state;
    this.onChange(provider, state, detail);
  }
}

const ALLOWED: Admission = { allowed: true, probe: false };
const PROBE: Admission = { allowed: true, probe: true };
