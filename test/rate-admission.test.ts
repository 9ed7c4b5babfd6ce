// DeferredAdmission (gateway/auth/rate-limiter.ts), the request count a metered call leaves for its
// credit hold, over real in-memory buckets: a request that fails before its hold is still counted
// once and a 429 replaces its error; one answered without a hold is counted after; and a state
// store that failed is answered at once, not asked again (its 503 must come within one timeout).
import test from "ava";
import { DeferredAdmission } from "../src/gateway/auth/rate-limiter.js";
import { InvalidRequestError, RateLimitExceededError } from "../src/gateway/errors.js";
import { LocalRateBuckets } from "../src/store/local-rate-buckets.js";
import type { Admission } from "../src/store/rate-buckets.js";
import { StateStoreFailure } from "../src/store/state-failure.js";

function counted(requestsPerMinute: number) {
  const buckets = new LocalRateBuckets();
  const takes: string[] = [];
  const counting = {
    admit: (key: string, rpm: number, tpm?: number) => {
      takes.push(key);
      return buckets.admit(key, rpm, tpm);
    },
    spendTokens: (key: string, tokens: number) => buckets.spendTokens(key, tokens),
  };
  const reported: Admission[] = [];
  const admission = () => new DeferredAdmission({ key: "gw_test", requestsPerMinute }, counting, (state) => reported.push(state));
  return { admission, takes, reported };
}

test("a request that fails before its hold is counted once, and once over the limit its error becomes the 429", async (t) => {
  const { admission, takes, reported } = counted(1);
  const invalid = () => Promise.reject(new InvalidRequestError("Invalid 'messages'."));
  await t.throwsAsync(admission().around(invalid), { instanceOf: InvalidRequestError });
  t.deepEqual(takes, ["gw_test"]);
  t.is(reported[0]?.requests.remaining, 0);
  const refused = await t.throwsAsync(admission().around(invalid), { instanceOf: RateLimitExceededError });
  t.is(refused.admission.refusedBy, "requests");
  t.is(takes.length, 2);
  t.is(reported[1]?.refusedBy, "requests");
});

test("a request answered without a hold is counted after its handler; one whose hold took it is not counted again", async (t) => {
  const { admission, takes } = counted(5);
  t.is(await admission().around(async () => "answered"), "answered");
  t.is(takes.length, 1);
  const held = admission();
  const result = await held.around(async () => {
    t.deepEqual(held.pending, { key: "gw_test", requestsPerMinute: 5 });
    held.taken({ retryAfterSeconds: 0, requests: { limit: 5, remaining: 3, resetMs: 1000 } });
    t.is(held.pending, undefined);
    return "held";
  });
  t.is(result, "held");
  t.is(takes.length, 1, "the hold's take is the only one");
});

test("a state store that failed the hold is answered as it failed: the take is not tried after it", async (t) => {
  const { admission, takes } = counted(5);
  const failed = new StateStoreFailure("Redis credits.hold: no answer in time");
  t.is(await t.throwsAsync(admission().around(() => Promise.reject(failed))), failed);
  t.deepEqual(takes, []);
});
