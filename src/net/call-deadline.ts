// One upstream call's abort: the caller's signal, the request's total deadline (one timer for the
// wait and the answer's last byte), or a failure found while reading (an answer over its cap).
// undici aborts the request, or destroys the answer's body, with the reason given here, so
// whoever reads the body gets that error.
import { EventEmitter } from "node:events";

/**
 * What undici is given as the request's signal: undici takes an EventEmitter with `aborted` and
 * `reason` as well as an AbortSignal. Why not an AbortController per call: on Node 20 creating
 * one costs about 6 µs, and listening on its signal a few more, a measurable share of a chat call.
 */
class CallSignal extends EventEmitter {
  aborted = false;
  reason: unknown;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit("abort");
  }
}

export class CallAbort {
  private readonly callSignal = new CallSignal();
  private timer: NodeJS.Timeout | undefined;
  private readonly forwardCallerAbort: () => void;

  constructor(
    private readonly caller: AbortSignal,
    /** performance.now() when the call must end; Infinity: only the caller's signal ends it. */
    deadline: number,
    /** The failure the deadline ends the call with. */
    outOfTime: () => Error,
  ) {
    this.forwardCallerAbort = () => this.callSignal.abort(caller.reason);
    if (caller.aborted) this.forwardCallerAbort();
    else caller.addEventListener("abort", this.forwardCallerAbort, { once: true });
    if (Number.isFinite(deadline)) {
      this.timer = setTimeout(() => this.fail(outOfTime()), Math.max(0, deadline - performance.now()));
      // A server with nothing else to do may stop; an answer nobody reads is ended at the deadline anyway.
      this.timer.unref();
    }
  }

  /** What undici is given: aborted by the caller, the deadline or fail(). */
  get signal(): EventEmitter {
    return this.callSignal;
  }

  /** The call failed for a reason of gw's own (the deadline, an answer over its cap). */
  get failure(): Error | undefined {
    return this.callSignal.aborted && !this.caller.aborted ? (this.callSignal.reason as Error) : undefined;
  }

  fail(error: Error): void {
    this.release();
    this.callSignal.abort(error);
  }

  /** The call is over (its body ended or was dropped): nothing may abort it any more. */
  release(): void {
    clearTimeout(this.timer);
    this.caller.removeEventListener("abort", this.forwardCallerAbort);
  }
}
