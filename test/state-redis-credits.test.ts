// The Redis credit store and rate buckets against a real redis-server: the shared conformance
// suites (two stores on one Redis stand for two gw instances), then what only a shared store has:
// leases that return a dead instance's holds once, renewals that keep a live one's, rows in the
// usage stream, scripts loaded again after Redis forgot them, buckets that expire when idle.
import test from "ava";
import { RedisCreditStore } from "../src/store/redis-credit-store.js";
import { RedisRateBuckets } from "../src/store/redis-rate-buckets.js";
import type { UsageRow } from "../src/store/usage-log.js";
import { eventually } from "./helpers/eventually.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { creditStoreConformance } from "./state/credit-store.conformance.js";
import { rateBucketsConformance } from "./state/rate-buckets.conformance.js";

let redis: TestRedis;

test.before(async () => {
  redis = await startRedis();
});

test.after.always(async () => {
  await redis?.stop();
});

let prefixes = 0;
/** A key prefix of its own per case, so cases sharing the server never meet. */
const freshPrefix = () => `t${prefixes++}:`;

creditStoreConformance(
  test,
  "redis",
  async () => {
    const prefix = freshPrefix();
    const stores = [new RedisCreditStore(redis.client(), { prefix }), new RedisCreditStore(redis.client(), { prefix })] as const;
    return {
      stores,
      buckets: new RedisRateBuckets(redis.client(), { prefix }),
      close: () => {
        for (const store of stores) store.close();
      },
    };
  },
  { rowIdsOnce: true },
);

rateBucketsConformance(test, "redis", async () => {
  const prefix = freshPrefix();
  return { buckets: [new RedisRateBuckets(redis.client(), { prefix }), new RedisRateBuckets(redis.client(), { prefix })], close: () => undefined };
});

const PERIOD = "2026-11";

function row(agent: string, credits: number, id = `row-${prefixes}-${credits}`): UsageRow {
  return {
    id,
    time: `${PERIOD}-03T08:00:00.000Z`,
    agent,
    keyPrefix: "gw_lease",
    endpoint: "/v1/chat/completions",
    model: "gpt-test",
    provider: "fake",
    units: {},
    credits,
    requestId: "req-1",
  };
}

/** Redis's clock in ms: leases are timed by it. */
async function redisNow(): Promise<number> {
  const [seconds, micros] = await redis.client().time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

test("redis: a closed instance's hold expires after its lease and its credits return once", async (t) => {
  const prefix = freshPrefix();
  // A lease many renewals long: a loaded machine's late timer must not let a live hold lapse.
  const dying = new RedisCreditStore(redis.client(), { prefix, leaseMs: 2000, renewEveryMs: 100 });
  const living = new RedisCreditStore(redis.client(), { prefix });
  t.teardown(() => living.close());
  const account = { agentId: "agent-lease", allowance: 10 };
  const live = (await living.hold(account, 3, 1, PERIOD)).held;
  const orphan = (await dying.hold(account, 7, 1, PERIOD)).held;
  if (!live || !orphan) throw new Error("the holds were refused");
  t.is((await living.balance(account, PERIOD)).planHeld, 10);
  dying.close(); // stops renewing without releasing, as a process that died
  await eventually(() => living.balance(account, PERIOD), { what: "the orphan's credits back", until: (balance) => balance.planHeld === 3 });
  // Returned once: sweeping again, releasing it late, or settling it late returns nothing more.
  await Promise.all([living.balance(account, PERIOD), dying.balance(account, PERIOD), living.hold(account, 0, 0, PERIOD)]);
  await dying.release(orphan);
  t.deepEqual(await living.balance(account, PERIOD), { planUsed: 0, planHeld: 3, keySpent: 0, keyHeld: 0 });
  t.is((await living.hold(account, 100, 1, PERIOD)).held?.amount, 7);
});

test("redis: a late settle of an expired hold bills its row and returns nothing twice", async (t) => {
  const prefix = freshPrefix();
  const dying = new RedisCreditStore(redis.client(), { prefix, leaseMs: 300, renewEveryMs: 100 });
  const living = new RedisCreditStore(redis.client(), { prefix });
  t.teardown(() => living.close());
  const account = { agentId: "agent-late", allowance: 10 };
  const live = (await living.hold(account, 3, 1, PERIOD)).held;
  const orphan = (await dying.hold(account, 7, 1, PERIOD)).held;
  if (!live || !orphan) throw new Error("the holds were refused");
  dying.close();
  await eventually(() => living.balance(account, PERIOD), { what: "the orphan's credits back", until: (balance) => balance.planHeld === 3 });
  await dying.settle(orphan, row("agent-late", 5));
  t.deepEqual(await living.balance(account, PERIOD), { planUsed: 5, planHeld: 3, keySpent: 0, keyHeld: 0 });
});

test("redis: a live instance's hold outlives its lease because it is renewed", async (t) => {
  const prefix = freshPrefix();
  const leaseMs = 3000;
  const holder = new RedisCreditStore(redis.client(), { prefix, leaseMs, renewEveryMs: 100 });
  const other = new RedisCreditStore(redis.client(), { prefix });
  t.teardown(() => {
    holder.close();
    other.close();
  });
  const account = { agentId: "agent-renewed", allowance: 10 };
  const started = await redisNow();
  const hold = (await holder.hold(account, 7, 1, PERIOD)).held;
  if (!hold) throw new Error("the hold was refused");
  await eventually(redisNow, { what: "two leases to pass", until: (now) => now > started + 2 * leaseMs, intervalMs: 200 });
  t.deepEqual(await other.balance(account, PERIOD), { planUsed: 0, planHeld: 7, keySpent: 0, keyHeld: 0 });
  t.deepEqual((await other.hold(account, 10, 10, PERIOD)).spendable, { credits: 3, limit: "plan" });
  await holder.release(hold);
  t.is((await other.balance(account, PERIOD)).planHeld, 0);
});

test("redis: each row is in its period's usage stream once, as JSON", async (t) => {
  const prefix = freshPrefix();
  const client = redis.client();
  const a = new RedisCreditStore(client, { prefix });
  const b = new RedisCreditStore(redis.client(), { prefix });
  t.teardown(() => {
    a.close();
    b.close();
  });
  const written = row("agent-stream", 12, "row-stream-1");
  await Promise.all([a.settle(null, written), b.settle(null, written), a.settle(null, written)]);
  const entries = await client.xrange(`${prefix}usage:${PERIOD}`, "-", "+");
  t.deepEqual(
    entries.map(([, fields]) => fields),
    [["r", JSON.stringify(written)]],
  );
});

test("redis: the scripts are loaded again after Redis forgot them", async (t) => {
  const prefix = freshPrefix();
  const client = redis.client();
  const store = new RedisCreditStore(client, { prefix });
  const buckets = new RedisRateBuckets(client, { prefix });
  t.teardown(() => store.close());
  const account = { agentId: "agent-flush", allowance: 10 };
  t.is((await store.hold(account, 4, 1, PERIOD)).held?.amount, 4);
  t.is((await buckets.admit("gw_flush", 10)).retryAfterSeconds, 0);
  await client.script("FLUSH");
  t.is((await store.hold(account, 4, 1, PERIOD)).held?.amount, 4);
  t.is((await buckets.admit("gw_flush", 10)).requests.remaining, 8);
});

test("redis: rate buckets expire once idle, and expire later the emptier they are", async (t) => {
  const prefix = freshPrefix();
  const client = redis.client();
  const buckets = new RedisRateBuckets(client, { prefix });
  await buckets.admit("gw_idle", 10, 100);
  buckets.spendTokens("gw_idle", 100);
  await buckets.admit("gw_idle", 10, 100); // refused by the tokens, after the spend on this connection
  const requestsTtl = await client.pttl(`${prefix}rate:{k:gw_idle}:requests`);
  const tokensTtl = await client.pttl(`${prefix}rate:{k:gw_idle}:tokens`);
  t.true(requestsTtl > 0, `requests bucket TTL ${requestsTtl}`);
  // The token bucket is empty (a minute from full); the request bucket is one request (6 s) from full.
  t.true(tokensTtl > requestsTtl, `tokens bucket TTL ${tokensTtl}, requests ${requestsTtl}`);
});

test("redis: tokens that cannot be counted go to onError, never an unhandled rejection", async (t) => {
  const client = redis.client();
  const errors: unknown[] = [];
  const buckets = new RedisRateBuckets(client, { prefix: freshPrefix(), onError: (error) => errors.push(error) });
  await buckets.admit("gw_down", 10, 100);
  client.disconnect();
  buckets.spendTokens("gw_down", 10);
  await eventually(() => errors.length, { what: "the error reported" });
  t.true(errors[0] instanceof Error);
});
