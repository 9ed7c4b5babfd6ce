// The heartbeat of the server's background work (the video poller, the batch runner): a tick every
// N seconds on a plain interval. node-cron did this before; for a fixed interval its schedule
// parser and time-zone formatters cost ~40 ms and ~5 MB at every start (docs/decisions.md §28). A
// tick still running when the next is due is skipped by the tick itself (each keeps a `ticking` flag).

export class RepeatingTick {
  private timer: NodeJS.Timeout | undefined;

  get running(): boolean {
    return this.timer !== undefined;
  }

  /**
   * Call `tick` every `seconds` from now on; the timer alone does not keep the process alive. A
   * tick that fails goes to `onError`: a rejection left unhandled would end the process (a state
   * store that is down for a moment must not stop the server).
   */
  start(seconds: number, tick: () => Promise<void>, onError: (error: unknown) => void): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      tick().catch(onError);
    }, seconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
