// The drain before the server stops (SIGTERM): requests in flight, streams included, may finish
// until server.drainTimeoutMs; a request that arrives meanwhile is answered 503 with Retry-After
// and Connection: close (app.ts, connection-policy.ts) rather than finding the port closed, and
// is not waited for.
import type { ServerResponse } from "node:http";
import type { ConnectionState } from "./connection-policy.js";

export class ServerDrain implements ConnectionState {
  draining = false;
  private inFlight = 0;
  private deadline = 0;
  private drained: (() => void) | null = null;

  /** Count a request that began before the drain, until its response closes. */
  track(response: ServerResponse): void {
    if (this.draining) return;
    this.inFlight += 1;
    response.once("close", this.ended);
  }

  /** The wait a request refused during the drain is told: until the drain's deadline, by which this process has stopped. */
  retryAfterSeconds(): number {
    return Math.max(1, Math.ceil((this.deadline - Date.now()) / 1000));
  }

  /** Refuse new requests from now on; resolves when those in flight have ended, or at the timeout. */
  drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    this.deadline = Date.now() + timeoutMs;
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.drained = resolve;
      setTimeout(resolve, timeoutMs).unref();
    });
  }

  private readonly ended = (): void => {
    this.inFlight -= 1;
    if (this.inFlight === 0) this.drained?.();
  };
}
