// What the video adapters do alike with a vendor's task API: a poll that failed with 404 (the
// task is gone) or 429 (a pause, not a failure), the announced length of a clip, and a cancel
// that finds the task already gone.
import type { UpstreamResponse } from "../net/upstream-http.js";
import { UpstreamHttpError } from "./provider-errors.js";
import type { VideoTaskState } from "./video-types.js";

/** A failed poll as the job's state: 404 lost, 429 still running after the upstream's pause (or `ratePauseMs`); anything else is thrown. */
export function pollFailureState(error: unknown, ratePauseMs: number): VideoTaskState {
  if (error instanceof UpstreamHttpError) {
    if (error.status === 404) return { state: "lost" };
    if (error.status === 429) return { state: "running", retryAfterMs: error.retryAfterMs ?? ratePauseMs };
  }
  throw error;
}

/** The clip's announced length in bytes; NaN when none is announced. */
export function fileLength(response: Pick<UpstreamResponse, "headers">): number {
  const value = response.headers["content-length"];
  return Number(Array.isArray(value) ? value[0] : value);
}

/** Sends the cancel and reads its answer; a task already gone (404) leaves nothing to cancel. */
export async function cancelTask(send: () => Promise<UpstreamResponse>): Promise<void> {
  try {
    const response = await send();
    await response.body.drain();
  } catch (error) {
    if (error instanceof UpstreamHttpError && error.status === 404) return;
    throw error;
  }
}
