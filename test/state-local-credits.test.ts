// The in-memory credit store and rate buckets (one gw process, its usage log in a temp dir) through
// the same conformance suites as the Redis ones (test/state-redis-credits.test.ts): the ledger and
// the rate limiter cannot tell which they have. One process is one instance: both "instances" of
// a case are the same object.
import test from "ava";
import { LocalCreditStore } from "../src/store/local-credit-store.js";
import { LocalRateBuckets } from "../src/store/local-rate-buckets.js";
import { UsageLog } from "../src/store/usage-log.js";
import { tempSubdir } from "./helpers/temp-dirs.js";
import { creditStoreConformance } from "./state/credit-store.conformance.js";
import { rateBucketsConformance } from "./state/rate-buckets.conformance.js";

creditStoreConformance(
  test,
  "local",
  async () => {
    const log = UsageLog.open(tempSubdir("gw-credits-", "usage"), new Date("2026-11-15T00:00:00Z"));
    const buckets = new LocalRateBuckets();
    const store = new LocalCreditStore(log, buckets);
    return { stores: [store, store], buckets, close: () => log.close() };
  },
  { rowIdsOnce: false },
);

rateBucketsConformance(test, "local", async () => {
  const buckets = new LocalRateBuckets();
  return { buckets: [buckets, buckets], close: () => undefined };
});
