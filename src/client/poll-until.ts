// Polling a resource until it reaches a final state (a batch), riding out the failures that pass:
// the gateway unreachable while it restarts, a 429, a 5xx. Anything else (a 404 ...) is thrown.
import { setTimeout as pause } from "node:timers/promises";
import { GwApiError } from "./gw-api-error.js";

/** Polls that may fail in a row for a passing reason before waiting gives up. */
export const MAX_POLL_RETRIES = 6;
const MAX_RETRY_DELAY_SECONDS = 30;

export interface PollOptions<T> {
  /** Seconds between polls. */
  intervalSeconds: number;
  /** Stops waiting (the thing polled goes on); rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Every poll's answer, the last (final) one included. */
  onUpdate?: (value: T) => void;
  /** A poll that failed in a way worth retrying, and the wait before the next. */
  onRetry?: (error: GwApiError, delaySeconds: number) => void;
}

/**
 * Read with `read` every `intervalSeconds` until `isFinal` says so, and answer that last value.
 * Failed polls that pass are retried with a growing wait (the gateway's Retry-After when it says
 * one), up to MAX_POLL_RETRIES in a row.
 */
export async function pollUntil<T>(read: (signal?: AbortSignal) => Promise<T>, isFinal: (value: T) => boolean, options: PollOptions<T>): Promise<T> {
  let failures = 0;
  for (;;) {
    let value: T;
    try {
      value = await read(options.signal);
      failures = 0;
    } catch (error) {
      if (options.signal?.aborted || !(error instanceof GwApiError) || !isPassing(error) || failures >= MAX_POLL_RETRIES) throw error;
      failures += 1;
      const delay = error.retryAfterSeconds ?? Math.min(MAX_RETRY_DELAY_SECONDS, options.intervalSeconds * 2 ** failures);
      options.onRetry?.(error, delay);
      await sleep(delay * 1000, options.signal);
      continue;
    }
    options.onUpdate?.(value);
    if (isFinal(value)) return value;
    await sleep(options.intervalSeconds * 1000, options.signal);
  }
}

/** Worth polling again: the gateway unreachable (a restart), rate limited, or failing for now. */
function isPassing(error: GwApiError): boolean {
  // Status 0 is also a client-side refusal (no key ...): only the transport's "cannot reach" passes.
  if (error.status === 0) return error.message.startsWith("cannot reach");
  return error.status === 429 || error.status >= 500;
}

/** Wait; an abort rejects with the signal's own reason, as the poll it interrupts does (not timers' AbortError). */
async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await pause(ms, undefined, { signal });
  } catch (error) {
    throw signal?.aborted ? signal.reason : error;
  }
}
