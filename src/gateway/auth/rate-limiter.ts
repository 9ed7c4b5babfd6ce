// Requests and tokens per minute per key, over the buckets of store/rate-buckets.ts (this
// process's, or Redis shared by several instances). A request takes one from its key's request
// bucket before any upstream work; tokens are taken from the key's token bucket once a call's
// usage is known (at most what the call held: ChatMetering caps them), so a key over its tokens
// per minute is refused until the bucket has refilled (docs/decisions.md §10).
//
// A metered call (chat, messages, responses, embeddings) takes its request in the same step as its
// credit hold (DeferredAdmission), which on a shared store is one round trip for both; a request
// that fails before it holds anything takes it on its own, and a 429 still wins over its error.

import type { PlanLimits } from "../../config/config-schema.js";
import type { Admission, RateLimitBuckets, RateTake } from "../../store/rate-buckets.js";
import { StateStoreFailure } from "../../store/state-failure.js";
import { RateLimitExceededError } from "../errors.js";
import type { Caller } from "./key-authenticator.js";

/** What one request takes from the caller's key: requests per minute (the plan's, or the key's own when lower) and its tokens per minute. */
export function rateTakeOf(caller: Caller, plan: PlanLimits): RateTake {
  return {
    key: caller.key.prefix,
    requestsPerMinute: Math.min(plan.requestsPerMinute, caller.key.rpm ?? Number.POSITIVE_INFINITY),
    tokensPerMinute: caller.key.tpm,
  };
}

/** The admission, or the 429 (with Retry-After) that a refused one is. */
export function admittedOrThrow(take: RateTake, admission: Admission): Admission {
  if (admission.refusedBy === "tokens" && take.tokensPerMinute !== undefined)
    throw new RateLimitExceededError(take.tokensPerMinute, admission.retryAfterSeconds, admission);
  if (admission.refusedBy === "requests") throw new RateLimitExceededError(take.requestsPerMinute, admission.retryAfterSeconds, admission);
  return admission;
}

/**
 * Count one request against the caller's key now; 429 with Retry-After when over. The state is
 * what the x-ratelimit-* headers report.
 */
export async function admitCaller(buckets: RateLimitBuckets, caller: Caller, plan: PlanLimits): Promise<Admission> {
  const take = rateTakeOf(caller, plan);
  return admittedOrThrow(take, await buckets.admit(take.key, take.requestsPerMinute, take.tokensPerMinute));
}

/**
 * A request's take of its key's rate limit, left for its credit hold to make (CreditLedger.reservePlanned
 * passes `pending` to the store's hold, then `taken`), or made on its own by `ensure` when the
 * request ends without one. Either way it is taken once, before any upstream call, and `report`
 * hears the admission, refused or not (the x-ratelimit-* headers).
 */
export class DeferredAdmission {
  private admission?: Admission;

  constructor(
    readonly take: RateTake,
    private readonly buckets: RateLimitBuckets,
    private readonly report: (admission: Admission) => void,
  ) {}

  /** The take still to make, for a hold that makes it in the same step; undefined once made. */
  get pending(): RateTake | undefined {
    return this.admission ? undefined : this.take;
  }

  /** The hold made the take: remember and report its admission; 429 when refused. */
  taken(admission: Admission): Admission {
    this.admission = admission;
    this.report(admission);
    return admittedOrThrow(this.take, admission);
  }

  /** Make the take on its own unless it was made: 429 when refused. */
  async ensure(): Promise<void> {
    if (this.admission) return;
    this.taken(await this.buckets.admit(this.take.key, this.take.requestsPerMinute, this.take.tokensPerMinute));
  }

  /**
   * Run a request's handler, taking its request on its own when the handler did not (it failed,
   * or answered without holding credits): a 429 then replaces the handler's error, as it would
   * have had the request been counted first. A failing state store's error is answered as it is.
   */
  around<T>(handler: () => Promise<T>): Promise<T> {
    // One `then`, no async frame, and nothing more when the hold took it: this runs on every chat request.
    return handler().then(
      (result) => (this.admission ? result : this.ensure().then(() => result)),
      (error: unknown) => {
        // A state store that failed the hold would fail the take too, after as long again: its
        // 503 is the answer, within one command timeout.
        if (this.admission || error instanceof StateStoreFailure) throw error;
        return this.ensure().then(() => {
          throw error;
        });
      },
    );
  }
}
