// The cases every CreditStore (src/store/credit-store.ts) must pass, whatever keeps its state. Not a
// test file itself (ava runs test/**/*.test.ts only): a test file per implementation calls
//
//   creditStoreConformance(test, "redis", async () => ({ stores: [one, two], close }));
//
// `open` is called once per case and gives two stores on ONE backend, standing for two gw
// instances (an in-memory implementation may give the same object twice); `close` is called when
// the case ends, pass or fail. Every case uses its own agent ids and key prefixes, so one backend
// may serve every case. Rows are written in two fixed periods (2026-10, 2026-11), not the clock's.
import { randomUUID } from "node:crypto";
import type { TestFn } from "ava";
import type { CreditAccount, CreditHold, CreditStore, HoldOutcome } from "../../src/store/credit-store.js";
import type { RateLimitBuckets } from "../../src/store/rate-buckets.js";
import { StoreError } from "../../src/store/store-error.js";
import type { UsageRow } from "../../src/store/usage-log.js";

export interface OpenedCreditStores {
  /** Two stores on one backend (two instances); the same object twice for an in-memory store. */
  stores: readonly [CreditStore, CreditStore];
  /** The rate buckets a hold's take counts in, on the same backend. */
  buckets: RateLimitBuckets;
  /** Called once the case ends, pass or fail. */
  close(): Promise<void> | void;
}

const PERIOD = "2026-11";
const EARLIER = "2026-10";

/** A fresh agent, or a fresh key prefix: cases never see each other's credits. */
function unique(label: string): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

function planAccount(allowance: number): CreditAccount {
  return { agentId: unique("agent"), allowance };
}

function keyAccount(allowance: number, credits: number, period: "month" | "total"): CreditAccount & { key: NonNullable<CreditAccount["key"]> } {
  return { agentId: unique("agent"), allowance, key: { prefix: unique("gw_key"), budget: { credits, period } } };
}

/** A usage row of the account's agent (and key, when it has one) in a period. */
function row(account: CreditAccount, credits: number, options: { period?: string; keyPrefix?: string; id?: string } = {}): UsageRow {
  return {
    id: options.id ?? randomUUID(),
    time: `${options.period ?? PERIOD}-15T12:00:00.000Z`,
    agent: account.agentId,
    keyPrefix: options.keyPrefix ?? account.key?.prefix ?? unique("gw_plain"),
    endpoint: "/v1/chat/completions",
    model: "gpt-test",
    provider: "fake",
    units: { input_tokens: 1 },
    credits,
    requestId: randomUUID(),
  };
}

function held(outcome: HoldOutcome): CreditHold {
  if (!outcome.held) throw new Error(`expected a hold, got spendable ${JSON.stringify(outcome.spendable)}`);
  return outcome.held;
}

/**
 * `rowIdsOnce`: the store writes a row id once however often it is settled (a shared store, whose
 * settle may be retried after a lost reply); the in-memory store leaves that to its callers.
 */
export function creditStoreConformance(test: TestFn, name: string, open: () => Promise<OpenedCreditStores>, options: { rowIdsOnce: boolean }): void {
  const opened = async (t: { teardown(fn: () => Promise<void> | void): void }): Promise<readonly [CreditStore, CreditStore]> => {
    const { stores, close } = await open();
    t.teardown(close);
    return stores;
  };
  const named = (title: string) => `${name}: ${title}`;

  test(named("a hold within the plan holds what is wanted, seen from the other instance"), async (t) => {
    const [a, b] = await opened(t);
    const account = planAccount(100);
    const hold = held(await a.hold(account, 30, 1, PERIOD));
    t.like(hold, { agentId: account.agentId, keyPrefix: undefined, amount: 30 });
    t.deepEqual(await b.balance(account, PERIOD), { planUsed: 0, planHeld: 30, keySpent: 0, keyHeld: 0 });
  });

  test(named("a hold over the plan holds what is left, then nothing"), async (t) => {
    const [a, b] = await opened(t);
    const account = planAccount(100);
    await a.settle(null, row(account, 60));
    t.is(held(await a.hold(account, 50, 1, PERIOD)).amount, 40);
    t.deepEqual(await b.hold(account, 1, 1, PERIOD), { spendable: { credits: 0, limit: "plan" } });
    t.deepEqual(await b.balance(account, PERIOD), { planUsed: 60, planHeld: 40, keySpent: 0, keyHeld: 0 });
  });

  test(named("less than atLeast left holds nothing and says what is left; atLeast met holds it"), async (t) => {
    const [a, b] = await opened(t);
    const account = planAccount(100);
    held(await a.hold(account, 60, 60, PERIOD));
    t.deepEqual(await b.hold(account, 50, 41, PERIOD), { spendable: { credits: 40, limit: "plan" } });
    t.is((await a.balance(account, PERIOD)).planHeld, 60);
    t.is(held(await b.hold(account, 50, 40, PERIOD)).amount, 40);
    t.is((await a.balance(account, PERIOD)).planHeld, 100);
  });

  test(named("wanting nothing holds nothing while credits are left, and is refused once none are"), async (t) => {
    const [a] = await opened(t);
    const account = planAccount(10);
    t.like(held(await a.hold(account, 0, 0, PERIOD)), { amount: 0 });
    t.is((await a.balance(account, PERIOD)).planHeld, 0);
    await a.settle(null, row(account, 10));
    t.deepEqual(await a.hold(account, 0, 0, PERIOD), { spendable: { credits: 0, limit: "plan" } });
  });

  test(named("an overdrawn plan says by how much, and holds nothing"), async (t) => {
    const [a, b] = await opened(t);
    const account = planAccount(10);
    await a.settle(null, row(account, 15));
    t.deepEqual(await b.hold(account, 5, 1, PERIOD), { spendable: { credits: -5, limit: "plan" } });
    t.deepEqual(await b.balance(account, PERIOD), { planUsed: 15, planHeld: 0, keySpent: 0, keyHeld: 0 });
  });

  test(named("a key's monthly budget caps the hold and names the key; earlier months do not count"), async (t) => {
    const [a, b] = await opened(t);
    const account = keyAccount(1000, 50, "month");
    await a.settle(null, row(account, 20));
    await a.settle(null, row(account, 30, { period: EARLIER }));
    const hold = held(await b.hold(account, 100, 1, PERIOD));
    t.like(hold, { agentId: account.agentId, keyPrefix: account.key.prefix, amount: 30 });
    t.deepEqual(await a.hold(account, 1, 1, PERIOD), { spendable: { credits: 0, limit: "key" } });
    t.deepEqual(await a.balance(account, PERIOD), { planUsed: 20, planHeld: 30, keySpent: 20, keyHeld: 30 });
  });

  test(named("a key's lifetime budget counts every month up to the period"), async (t) => {
    const [a, b] = await opened(t);
    const account = keyAccount(1000, 50, "total");
    await a.settle(null, row(account, 30, { period: EARLIER }));
    await b.settle(null, row(account, 15));
    t.is(held(await a.hold(account, 100, 1, PERIOD)).amount, 5);
    t.deepEqual(await b.balance(account, PERIOD), { planUsed: 15, planHeld: 5, keySpent: 45, keyHeld: 5 });
    t.deepEqual(await b.hold(account, 1, 1, PERIOD), { spendable: { credits: 0, limit: "key" } });
  });

  test(named("another key's rows spend the plan, not this key's budget"), async (t) => {
    const [a] = await opened(t);
    const account = keyAccount(100, 50, "month");
    await a.settle(null, row(account, 70, { keyPrefix: unique("gw_other") }));
    t.deepEqual(await a.balance(account, PERIOD), { planUsed: 70, planHeld: 0, keySpent: 0, keyHeld: 0 });
    t.deepEqual(await a.hold(account, 40, 40, PERIOD), { spendable: { credits: 30, limit: "plan" } });
  });

  test(named("on a tie the plan is the limit; the key only when strictly smaller"), async (t) => {
    const [a] = await opened(t);
    t.deepEqual(await a.hold(keyAccount(40, 40, "month"), 50, 45, PERIOD), { spendable: { credits: 40, limit: "plan" } });
    t.deepEqual(await a.hold(keyAccount(40, 39, "month"), 50, 45, PERIOD), { spendable: { credits: 39, limit: "key" } });
  });

  test(named("100 concurrent holds on two instances never hold more than a plan of 10, nor bill more"), async (t) => {
    const [a, b] = await opened(t);
    const account = planAccount(10);
    const outcomes = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).hold(account, 1, 1, PERIOD)));
    const holds = outcomes.flatMap((outcome) => (outcome.held ? [outcome.held] : []));
    t.is(holds.length, 10);
    for (const outcome of outcomes) if (!outcome.held) t.deepEqual(outcome.spendable, { credits: 0, limit: "plan" });
    await Promise.all(holds.map((hold, i) => (i % 2 ? a : b).settle(hold, row(account, hold.amount))));
    t.deepEqual(await a.balance(account, PERIOD), { planUsed: 10, planHeld: 0, keySpent: 0, keyHeld: 0 });
    t.deepEqual(await b.hold(account, 1, 1, PERIOD), { spendable: { credits: 0, limit: "plan" } });
  });

  test(named("100 concurrent holds of up to 3 against a key budget of 10 hold exactly 10"), async (t) => {
    const [a, b] = await opened(t);
    const account = keyAccount(1000, 10, "month");
    const outcomes = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).hold(account, 3, 1, PERIOD)));
    const holds = outcomes.flatMap((outcome) => (outcome.held ? [outcome.held] : []));
    t.is(
      holds.reduce((sum, hold) => sum + hold.amount, 0),
      10,
    );
    for (const outcome of outcomes) if (!outcome.held) t.deepEqual(outcome.spendable, { credits: 0, limit: "key" });
    await Promise.all(holds.map((hold, i) => (i % 2 ? a : b).settle(hold, row(account, hold.amount))));
    t.deepEqual(await b.balance(account, PERIOD), { planUsed: 10, planHeld: 0, keySpent: 10, keyHeld: 0 });
  });

  // Not registered at all for a store that does not promise it: no skipped cases.
  const rowIdTest = options.rowIdsOnce ? test : () => undefined;
  rowIdTest(named("a row settled twice, on two instances at once, is written and billed once"), async (t) => {
    const [a, b] = await opened(t);
    const account = keyAccount(100, 100, "month");
    const hold = held(await a.hold(account, 30, 1, PERIOD));
    const billed = row(account, 20);
    await Promise.all([a.settle(hold, billed), b.settle(null, billed)]);
    t.deepEqual(await b.balance(account, PERIOD), { planUsed: 20, planHeld: 0, keySpent: 20, keyHeld: 0 });
    t.true(await a.hasRow(billed.id, [PERIOD]));
  });

  rowIdTest(named("settling a row written before still releases the hold, and bills nothing more"), async (t) => {
    const [a, b] = await opened(t);
    const account = planAccount(100);
    const billed = row(account, 20);
    await a.settle(null, billed);
    const hold = held(await b.hold(account, 30, 1, PERIOD));
    await b.settle(hold, billed);
    t.deepEqual(await a.balance(account, PERIOD), { planUsed: 20, planHeld: 0, keySpent: 0, keyHeld: 0 });
  });

  test(named("a hold released twice, or released after it settled, returns its credits once"), async (t) => {
    const [a, b] = await opened(t);
    const account = keyAccount(100, 100, "month");
    const first = held(await a.hold(account, 30, 1, PERIOD));
    const second = held(await b.hold(account, 20, 1, PERIOD));
    await a.release(first);
    await b.release(first);
    t.deepEqual(await a.balance(account, PERIOD), { planUsed: 0, planHeld: 20, keySpent: 0, keyHeld: 20 });
    await b.settle(second, row(account, 5));
    await a.release(second);
    t.deepEqual(await b.balance(account, PERIOD), { planUsed: 5, planHeld: 0, keySpent: 5, keyHeld: 0 });
  });

  test(named("a kept hold is found by name on any instance until it settles"), async (t) => {
    const [a, b] = await opened(t);
    const account = keyAccount(100, 100, "month");
    const jobId = unique("job");
    const hold = held(await a.hold(account, 30, 1, PERIOD));
    await a.keep(jobId, hold);
    await b.keep(jobId, hold);
    t.deepEqual(await b.kept(jobId), { id: hold.id, agentId: account.agentId, keyPrefix: account.key.prefix, amount: 30 });
    t.deepEqual(await b.balance(account, PERIOD), { planUsed: 0, planHeld: 30, keySpent: 0, keyHeld: 30 });
    const found = await b.kept(jobId);
    if (!found) throw new Error("the kept hold vanished");
    await b.settle(found, row(account, 25));
    t.is(await a.kept(jobId), undefined);
    t.is(await b.kept(jobId), undefined);
    t.deepEqual(await a.balance(account, PERIOD), { planUsed: 25, planHeld: 0, keySpent: 25, keyHeld: 0 });
  });

  test(named("a kept hold released is forgotten and its credits return"), async (t) => {
    const [a, b] = await opened(t);
    const account = planAccount(100);
    const jobId = unique("job");
    const hold = held(await a.hold(account, 30, 1, PERIOD));
    await a.keep(jobId, hold);
    await b.release(hold);
    t.is(await a.kept(jobId), undefined);
    t.is((await b.balance(account, PERIOD)).planHeld, 0);
  });

  test(named("keeping a hold no longer held keeps nothing"), async (t) => {
    const [a, b] = await opened(t);
    const account = planAccount(100);
    const jobId = unique("job");
    const hold = held(await a.hold(account, 30, 1, PERIOD));
    await a.release(hold);
    await b.keep(jobId, hold);
    t.is(await a.kept(jobId), undefined);
    t.is((await b.balance(account, PERIOD)).planHeld, 0);
  });

  test(named("keepUnchecked holds past the balance, once per name, on two instances at once"), async (t) => {
    const [a, b] = await opened(t);
    const account = keyAccount(10, 100, "month");
    const jobId = unique("job");
    const [first, second] = await Promise.all([
      a.keepUnchecked(jobId, account.agentId, 25, account.key.prefix),
      b.keepUnchecked(jobId, account.agentId, 25, account.key.prefix),
    ]);
    t.deepEqual(second, first);
    t.like(first, { agentId: account.agentId, keyPrefix: account.key.prefix, amount: 25 });
    t.deepEqual(await a.kept(jobId), first);
    t.deepEqual(await b.keepUnchecked(jobId, account.agentId, 99, account.key.prefix), first);
    t.deepEqual(await a.balance(account, PERIOD), { planUsed: 0, planHeld: 25, keySpent: 0, keyHeld: 25 });
    t.deepEqual(await b.hold(account, 1, 1, PERIOD), { spendable: { credits: -15, limit: "plan" } });
    await b.settle(first, row(account, 25));
    t.is(await a.kept(jobId), undefined);
    t.deepEqual(await a.balance(account, PERIOD), { planUsed: 25, planHeld: 0, keySpent: 25, keyHeld: 0 });
  });

  test(named("hasRow finds a row in the periods asked, and only there"), async (t) => {
    const [a, b] = await opened(t);
    const account = planAccount(100);
    const billed = row(account, 1);
    await a.settle(null, billed);
    t.true(await b.hasRow(billed.id, [PERIOD]));
    t.true(await b.hasRow(billed.id, [EARLIER, PERIOD]));
    t.false(await b.hasRow(billed.id, [EARLIER]));
    t.false(await b.hasRow(randomUUID(), [EARLIER, PERIOD]));
  });

  test(named("a row the usage log would refuse is refused with a StoreError; nothing is written or released"), async (t) => {
    const [a, b] = await opened(t);
    const account = planAccount(100);
    const hold = held(await a.hold(account, 30, 1, PERIOD));
    const fractional = row(account, 1.5);
    await t.throwsAsync(async () => a.settle(hold, fractional), { instanceOf: StoreError });
    await t.throwsAsync(async () => a.settle(hold, { ...row(account, 1), agent: "" }), { instanceOf: StoreError });
    await t.throwsAsync(async () => b.settle(null, row(account, -1)), { instanceOf: StoreError });
    t.false(await b.hasRow(fractional.id, [PERIOD]));
    t.deepEqual(await b.balance(account, PERIOD), { planUsed: 0, planHeld: 30, keySpent: 0, keyHeld: 0 });
  });

  test(named("a hold with a take counts the request in the key's buckets on every instance; a refused take holds nothing"), async (t) => {
    const { stores, buckets, close } = await open();
    t.teardown(close);
    const [a, b] = stores;
    const account = planAccount(100);
    const take = { key: unique("gw_rate"), requestsPerMinute: 2 };
    const first = await a.hold(account, 10, 10, PERIOD, take);
    t.is(held(first).amount, 10);
    t.like(first.admission, { retryAfterSeconds: 0, refusedBy: undefined, requests: { limit: 2, remaining: 1 } });
    const second = await b.hold(account, 10, 10, PERIOD, take);
    t.is(held(second).amount, 10);
    t.like(second.admission, { requests: { remaining: 0 } });
    const refused = await a.hold(account, 10, 10, PERIOD, take);
    t.is(refused.held, undefined);
    t.is(refused.spendable, undefined);
    t.like(refused.admission, { refusedBy: "requests", requests: { remaining: 0 } });
    t.true((refused.admission?.retryAfterSeconds ?? 0) >= 1);
    t.deepEqual(await b.balance(account, PERIOD), { planUsed: 0, planHeld: 20, keySpent: 0, keyHeld: 0 });
    // The same buckets as a request counted alone.
    t.is((await buckets.admit(take.key, 2)).refusedBy, "requests");
    // Without a take, a hold counts nothing and says nothing of the buckets.
    const plain = await b.hold(account, 10, 10, PERIOD);
    t.is(held(plain).amount, 10);
    t.false("admission" in plain);
  });

  test(named("a take counts the request even when the credits refuse it, as a request refused with 402 is counted"), async (t) => {
    const { stores, buckets, close } = await open();
    t.teardown(close);
    const [a, b] = stores;
    const account = planAccount(5);
    const take = { key: unique("gw_rate"), requestsPerMinute: 3 };
    const refused = await a.hold(account, 10, 10, PERIOD, take);
    t.is(refused.held, undefined);
    t.deepEqual(refused.spendable, { credits: 5, limit: "plan" });
    t.like(refused.admission, { refusedBy: undefined, requests: { remaining: 2 } });
    t.like(await b.hold(account, 5, 5, PERIOD, take), { held: { amount: 5 }, admission: { requests: { remaining: 1 } } });
    t.like(await buckets.admit(take.key, 3), { refusedBy: undefined, requests: { remaining: 0 } });
  });
}
