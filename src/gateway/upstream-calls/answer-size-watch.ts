// An answer that passes the upstream client's size cap ends its call with UpstreamNetworkError
// "answer_too_large" (not retried). It was produced, and paid for, upstream: the call is billed
// what the candidate that served it held (ChatMetering.failed), so the watch remembers which
// candidate that was as the error goes by (docs/decisions.md §3).
import { UpstreamNetworkError } from "../../providers/provider-errors.js";
import type { RouteCandidate } from "../routing/route-resolver.js";
import type { Attempt } from "./upstream-attempts.js";

/**
 * Which candidate's answer passed the size cap, if one did. `watch` wraps an attempt so that its
 * answer_too_large failure is remembered on the way out (the attempts end with it: not retried).
 */
export class AnswerSizeWatch {
  tooLarge: RouteCandidate | undefined;

  watch<T>(attempt: (target: Attempt) => Promise<T>): (target: Attempt) => Promise<T> {
    return async (target) => {
      try {
        return await attempt(target);
      } catch (error) {
        this.saw(error, target.candidate);
        throw error;
      }
    };
  }

  /** Remember `candidate` when `error` is an answer over the size cap. */
  saw(error: unknown, candidate: RouteCandidate): void {
    if (isAnswerTooLarge(error)) this.tooLarge = candidate;
  }
}

export function isAnswerTooLarge(error: unknown): boolean {
  return error instanceof UpstreamNetworkError && error.failure === "answer_too_large";
}
