// One upstream call's abort: the caller's signal, the request's total deadline (one timer for the
// wait and the answer's last byte), or a failure found while reading (an answer over its cap).
// The answer (dispatched-answer.ts) is aborted with the reason given here, so whoever reads its
// body gets that error.

export class CallAbort {
  private aborted = false;
  private reason: unknown;
  private timer: NodeJS.Timeout | undefined;
  private readonly forwardCallerAbort: () => void;

  constructor(
    private readonly caller: AbortSignal,
    /** performance.now() when the call must end; Infinity: only the caller's signal ends it. */
    deadline: number,
    /** The failure the deadline ends the call with. */
    outOfTime: () => Error,
    /** Ends the call's answer (an abort listener per call would cost more: no AbortController is made per call). */
    private readonly end: (reason: Error) => void,
  ) {
    this.forwardCallerAbort = () => this.abort(caller.reason);
    if (caller.aborted) this.forwardCallerAbort();
    else caller.addEventListener("abort", this.forwardCallerAbort, { once: true });
    if (Number.isFinite(deadline)) {
      this.timer = setTimeout(() => this.fail(outOfTime()), Math.max(0, deadline - performance.now()));
      // A server with nothing else to do may stop; an answer nobody reads is ended at the deadline anyway.
      this.timer.unref();
    }
  }

  /** The call failed for a reason of gw's own (the deadline, an answer over its cap). */
  get failure(): Error | undefined {
    return this.aborted && !this.caller.aborted ? (this.reason as Error) : undefined;
  }

  fail(error: Error): void {
    this.release();
    this.abort(error);
  }

  /** The call is over (its answer ended or was dropped): nothing may abort it any more. */
  release(): void {
    clearTimeout(this.timer);
    this.caller.removeEventListener("abort", this.forwardCallerAbort);
  }

  private abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.end(reason instanceof Error ? reason : new Error(String(reason ?? "the call was aborted")));
  }
}
