// The cases every RateLimitBuckets (src/store/rate-buckets.ts) must pass, whatever keeps its state.
// Not a test file itself (ava runs test/**/*.test.ts only): a test file per implementation calls
//
//   rateBucketsConformance(test, "redis", async () => ({ buckets: [one, two], close }));
//
// `open` is called once per case and gives two bucket sets on ONE backend, standing for two gw
// instances (an in-memory implementation may give the same object twice); `close` is called when
// the case ends, pass or fail. Every case uses its own keys. Rates are low (a few a minute), so
// what refills while a case runs on a loaded machine cannot change its answers.
import { randomUUID } from "node:crypto";
import type { TestFn } from "ava";
import type { Admission, RateLimitBuckets } from "../../src/store/rate-buckets.js";
import { eventually } from "../helpers/eventually.js";

export interface OpenedRateBuckets {
  /** Two bucket sets on one backend (two instances); the same object twice for an in-memory one. */
  buckets: readonly [RateLimitBuckets, RateLimitBuckets];
  /** Called once the case ends, pass or fail. */
  close(): Promise<void> | void;
}

function unique(): string {
  return `gw_rate-${randomUUID().slice(0, 8)}`;
}

export function rateBucketsConformance(test: TestFn, name: string, open: () => Promise<OpenedRateBuckets>): void {
  const opened = async (t: { teardown(fn: () => Promise<void> | void): void }): Promise<readonly [RateLimitBuckets, RateLimitBuckets]> => {
    const { buckets, close } = await open();
    t.teardown(close);
    return buckets;
  };
  const named = (title: string) => `${name}: ${title}`;

  test(named("a new key's buckets start full; an admit takes one request and no token"), async (t) => {
    const [a] = await opened(t);
    const first = await a.admit(unique(), 10);
    t.is(first.retryAfterSeconds, 0);
    t.is(first.refusedBy, undefined);
    t.deepEqual(first.requests, { limit: 10, remaining: 9, resetMs: 6000 });
    t.is(first.tokens, undefined);
    const withTokens = await a.admit(unique(), 10, 1000);
    t.deepEqual(withTokens.tokens, { limit: 1000, remaining: 1000, resetMs: 0 });
  });

  test(named("30 admits at once on two instances at 10 a minute admit exactly 10"), async (t) => {
    const [a, b] = await opened(t);
    const key = unique();
    const admissions = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).admit(key, 10)));
    t.is(admissions.filter((admission) => admission.retryAfterSeconds === 0).length, 10);
    for (const refused of admissions.filter((admission) => admission.retryAfterSeconds > 0)) {
      t.is(refused.refusedBy, "requests");
      t.is(refused.requests.remaining, 0);
      // One request back takes at most 6 s at 10 a minute; a refusal that took one would wait longer.
      t.true(refused.retryAfterSeconds <= 6, `retry after ${refused.retryAfterSeconds} s`);
      t.true(refused.requests.resetMs > 0 && refused.requests.resetMs <= 60_000);
    }
  });

  test(named("a refused request takes nothing: the wait never grows"), async (t) => {
    const [a, b] = await opened(t);
    const key = unique();
    for (let i = 0; i < 10; i++) t.is((await (i % 2 ? a : b).admit(key, 10)).retryAfterSeconds, 0);
    for (let i = 0; i < 10; i++) {
      const refused = await (i % 2 ? a : b).admit(key, 10);
      t.is(refused.refusedBy, "requests");
      t.true(refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 6, `retry after ${refused.retryAfterSeconds} s`);
    }
  });

  test(named("tokens spent on one instance refuse the key on the other until paid back"), async (t) => {
    const [a, b] = await opened(t);
    const key = unique();
    t.is((await a.admit(key, 1000, 100)).retryAfterSeconds, 0);
    b.spendTokens(key, 150);
    const refused = await eventually(() => a.admit(key, 1000, 100), { what: "a refusal by tokens", until: (admission) => admission.refusedBy === "tokens" });
    // 51 tokens short at 100 a minute: 30.6 s, less what refilled since.
    t.true(refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 31, `retry after ${refused.retryAfterSeconds} s`);
    t.deepEqual(refused.tokens && { limit: refused.tokens.limit, remaining: refused.tokens.remaining }, { limit: 100, remaining: 0 });
  });

  test(named("a request refused by its tokens takes no request; the longer wait refuses"), async (t) => {
    const [a] = await opened(t);
    const key = unique();
    t.is((await a.admit(key, 3, 100)).retryAfterSeconds, 0);
    a.spendTokens(key, 1000);
    const refusals: Admission[] = [
      await eventually(() => a.admit(key, 3, 100), { what: "a refusal by tokens", until: (admission) => admission.refusedBy === "tokens" }),
    ];
    for (let i = 0; i < 3; i++) refusals.push(await a.admit(key, 3, 100));
    for (const [i, refused] of refusals.entries()) {
      t.is(refused.refusedBy, "tokens");
      // 901 tokens short at 100 a minute is over 9 minutes; a request is back within 20 s.
      t.true(refused.retryAfterSeconds > 60 && refused.retryAfterSeconds <= 541, `retry after ${refused.retryAfterSeconds} s`);
      if (i > 0) t.true(refused.requests.remaining >= refusals[i - 1]!.requests.remaining, "a refusal took a request");
    }
    t.true(refusals[0]!.requests.remaining >= 1);
  });

  test(named("tokens spent before the key has a token limit count nothing"), async (t) => {
    const [a] = await opened(t);
    const key = unique();
    t.is((await a.admit(key, 10)).retryAfterSeconds, 0);
    a.spendTokens(key, 1000);
    const admitted = await a.admit(key, 10, 100);
    t.is(admitted.retryAfterSeconds, 0);
    t.deepEqual(admitted.tokens, { limit: 100, remaining: 100, resetMs: 0 });
  });

  test(named("a lowered limit takes effect at once; a raised one does not fill the bucket"), async (t) => {
    const [a, b] = await opened(t);
    const key = unique();
    for (let i = 0; i < 5; i++) t.is((await a.admit(key, 10)).retryAfterSeconds, 0);
    const lowered = await b.admit(key, 3);
    t.is(lowered.retryAfterSeconds, 0);
    t.like(lowered.requests, { limit: 3, remaining: 2 });
    t.is((await a.admit(key, 3)).retryAfterSeconds, 0);
    t.is((await b.admit(key, 3)).retryAfterSeconds, 0);
    const refused = await a.admit(key, 3);
    t.is(refused.refusedBy, "requests");
    t.true(refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 20, `retry after ${refused.retryAfterSeconds} s`);
    const raised = await b.admit(key, 20);
    t.is(raised.requests.limit, 20);
    t.true(raised.requests.remaining < 10, `the raised bucket holds ${raised.requests.remaining}`);
  });
}
