// The one way a test waits for something that happens on its own time (a reload, a job, a log
// line): poll a probe until it answers, with a deadline generous enough for a loaded machine. A
// deadline is how long we are willing to wait, never a claim about speed: speed is `npm run bench`.
import { inspect } from "node:util";

export interface EventuallyOptions<T> {
  /** What is awaited, for the message when it never comes. */
  what?: string;
  /** Done when this accepts the probe's value (default: when the value is truthy). */
  until?: (value: T) => boolean;
  /** How long to keep trying (default 30 s). */
  timeoutMs?: number;
  /** Pause between tries (default 25 ms). */
  intervalMs?: number;
}

/**
 * Call `probe` until its value is accepted (truthy, or `until(value)`), then return that value. A
 * probe that throws (an assertion from node:assert, a refused connection) is tried again. When the
 * deadline passes, throws an error naming what was awaited and the last value or error seen.
 */
export async function eventually<T>(probe: () => T | Promise<T>, options: EventuallyOptions<T> | string = {}): Promise<T> {
  const { what = "a condition", until = Boolean, timeoutMs = 30_000, intervalMs = 25 } = typeof options === "string" ? { what: options } : options;
  const deadline = Date.now() + timeoutMs;
  let last: { value: T } | { error: unknown } | undefined;
  for (;;) {
    try {
      const value = await probe();
      if (until(value)) return value;
      last = { value };
    } catch (error) {
      last = { error };
    }
    if (Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  const seen = last === undefined ? "nothing" : "error" in last ? `the error ${inspect(last.error)}` : `the value ${inspect(last.value, { depth: 4 })}`;
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}; last saw ${seen}`);
}
