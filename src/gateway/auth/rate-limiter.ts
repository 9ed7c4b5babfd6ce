// Requests and tokens per minute per key, over the buckets of store/rate-buckets.ts (this
// process's, or Redis shared by several instances). A request takes one from its key's request
// bucket before any work; tokens are taken from the key's token bucket once a call's usage is
// known (at most what the call held: ChatMetering caps them), so a key over its tokens per minute
// is refused until the bucket has refilled (docs/decisions.md §10).

import type { PlanLimits } from "../../config/config-schema.js";
import type { Admission, RateLimitBuckets } from "../../store/rate-buckets.js";
import { RateLimitExceededError } from "../errors.js";
import type { Caller } from "./key-authenticator.js";

/**
 * Count one request against the caller's key: requests per minute (the plan's, or the key's own
 * when lower) and its tokens per minute; 429 with Retry-After when over. The state is what the
 * x-ratelimit-* headers report.
 */
export async function admitCaller(buckets: RateLimitBuckets, caller: Caller, plan: PlanLimits): Promise<Admission> {
  const requestsPerMinute = Math.min(plan.requestsPerMinute, caller.key.rpm ?? Number.POSITIVE_INFINITY);
  const tokensPerMinute = caller.key.tpm;
  const admission = await buckets.admit(caller.key.prefix, requestsPerMinute, tokensPerMinute);
  if (admission.refusedBy === "tokens" && tokensPerMinute !== undefined)
    throw new RateLimitExceededError(tokensPerMinute, admission.retryAfterSeconds, admission);
  if (admission.refusedBy === "requests") throw new RateLimitExceededError(requestsPerMinute, admission.retryAfterSeconds, admission);
  return admission;
}
