// Pure pieces of the domain: route resolution, weights, pricing, rate limiting, keys, ledger.

import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "ava";
import { DEFAULT_PLANS, type RouteConfig } from "../src/config/config-schema.js";
import { CreditLedger } from "../src/gateway/billing/credit-ledger.js";
import { creditsForTokens } from "../src/gateway/billing/pricing.js";
import { RateLimiter } from "../src/gateway/billing/rate-limiter.js";
import { InsufficientCreditsError, ModelNotFoundError, ModelRequiresUpgradeError } from "../src/gateway/errors.js";
import { LatencyTracker } from "../src/gateway/routing/latency-tracker.js";
import { resolveRoutes, weightedOrder } from "../src/gateway/routing/route-resolver.js";
import { generateApiKey, hashApiKey, KEY_PATTERN, visiblePrefix } from "../src/store/api-keys.js";
import { UsageLog } from "../src/store/usage-log.js";

const route = (value: Partial<RouteConfig> & { prefix: string }): RouteConfig => ({ priority: 0, freeTier: false, ...value });
const pro = { planName: "pro", plan: DEFAULT_PLANS.pro };
const free = { planName: "free", plan: DEFAULT_PLANS.free };

test("routes: highest priority first, then longest prefix; prefix removed upstream", (t) => {
  const routes = [
    route({ prefix: "openai/", provider: "a", priority: 1 }),
    route({ prefix: "openai/gpt-4", provider: "b", priority: 1 }),
    route({ prefix: "openai/", provider: "c", priority: 5 }),
    route({ prefix: "other/", provider: "d", priority: 9 }),
  ];
  const candidates = resolveRoutes({ routes }, "openai/gpt-4o", pro);
  t.deepEqual(
    candidates.map((candidate) => candidate.provider),
    ["c", "b", "a"],
  );
  t.deepEqual(
    candidates.map((candidate) => candidate.upstreamModel),
    ["gpt-4o", "o", "gpt-4o"],
  );
  t.true(candidates.every((candidate) => candidate.publicModel === "openai/gpt-4o"));
});

test("routes: no match, an empty remainder and auto without an auto route are model_not_found", (t) => {
  const routes = [route({ prefix: "openai/", provider: "a" })];
  t.throws(() => resolveRoutes({ routes }, "mistral/x", pro), { instanceOf: ModelNotFoundError });
  t.throws(() => resolveRoutes({ routes }, "openai/", pro), { instanceOf: ModelNotFoundError });
  t.throws(() => resolveRoutes({ routes }, "auto", pro), { instanceOf: ModelNotFoundError });
});

test("routes: free plans reach only free-tier routes", (t) => {
  const routes = [route({ prefix: "m/", provider: "paid", priority: 9 }), route({ prefix: "m/", provider: "cheap", freeTier: true })];
  t.deepEqual(
    resolveRoutes({ routes }, "m/x", free).map((candidate) => candidate.provider),
    ["cheap"],
  );
  t.throws(() => resolveRoutes({ routes: [routes[0]!] }, "m/x", free), { instanceOf: ModelRequiresUpgradeError });
});

test("auto: the first pick follows the weights; the concrete model is named", (t) => {
  const routes = [
    route({
      prefix: "auto",
      upstreams: [
        { provider: "a", model: "small", weight: 3 },
        { provider: "b", model: "big", weight: 1 },
      ],
    }),
  ];
  let a = 0;
  for (let index = 0; index < 4000; index += 1) if (resolveRoutes({ routes }, "auto", pro)[0]!.provider === "a") a += 1;
  t.true(a > 2800 && a < 3200, `a chosen ${a} of 4000`);
  const [first, second] = resolveRoutes({ routes }, "auto", { ...pro, random: () => 0.9 });
  t.is(first!.publicModel, "b/big");
  t.is(second!.publicModel, "a/small");
});

test("weightedOrder: deterministic with a given random", (t) => {
  const items = [
    { weight: 1, id: "x" },
    { weight: 1, id: "y" },
    { weight: 2, id: "z" },
  ];
  t.deepEqual(
    weightedOrder(items, () => 0).map((item) => item.id),
    ["x", "z", "y"],
  );
  t.deepEqual(
    weightedOrder(items, () => 0.99).map((item) => item.id),
    ["z", "x", "y"],
  );
});

test("low-latency plans try the fastest recent upstream first", (t) => {
  const latency = new LatencyTracker();
  latency.record("slow", "m", 300);
  latency.record("fast", "m", 20);
  const routes = [
    route({
      prefix: "auto",
      upstreams: [
        { provider: "slow", model: "m", weight: 100 },
        { provider: "fast", model: "m", weight: 1 },
      ],
    }),
  ];
  const candidates = resolveRoutes({ routes }, "auto", { planName: "max", plan: DEFAULT_PLANS.max, latency });
  t.is(candidates[0]!.provider, "fast");
});

test("pricing: integer credits, rounded up, without float noise", (t) => {
  const pricing = { input_per_mtok: 0.15, output_per_mtok: 0.6 };
  const tokens = (input: number, output: number) => ({ input, cacheRead: 0, cacheWrite: 0, output });
  t.is(creditsForTokens(pricing, tokens(12, 3), 1_000_000), 4); // 1.8 + 1.8 = 3.6
  t.is(creditsForTokens({ input_per_mtok: 0.1, output_per_mtok: 0.2 }, tokens(10, 10), 1_000_000), 3);
  t.is(creditsForTokens(pricing, tokens(0, 0), 1_000_000), 0);
  t.is(creditsForTokens({ input_per_mtok: 2.5, output_per_mtok: 10 }, tokens(1_000_000, 0), 1_000_000), 2_500_000);
});

test("pricing: cache reads and writes at their own prices, else at the input price", (t) => {
  const cached = { input: 1000, cacheRead: 2000, cacheWrite: 3000, output: 100 };
  // 1000 x 3 + 2000 x 0.3 + 3000 x 3.75 + 100 x 15 = 3000 + 600 + 11250 + 1500
  t.is(creditsForTokens({ input_per_mtok: 3, output_per_mtok: 15, cache_read_per_mtok: 0.3, cache_write_per_mtok: 3.75 }, cached, 1_000_000), 16_350);
  // Unpriced cache tokens cost what input costs: 6000 x 3 + 1500
  t.is(creditsForTokens({ input_per_mtok: 3, output_per_mtok: 15 }, cached, 1_000_000), 19_500);
});

test("rate limiter: a bucket of `perMinute`, refilled continuously, answers seconds to wait", (t) => {
  let now = 0;
  const limiter = new RateLimiter(() => now);
  for (let index = 0; index < 3; index += 1) t.is(limiter.take("k", 3), 0);
  t.is(limiter.take("k", 3), 20);
  t.is(limiter.take("other", 3), 0);
  now += 20_000;
  t.is(limiter.take("k", 3), 0);
  t.true(limiter.take("k", 3) > 0);
});

test("api keys: gw_ + 43 base62 characters (32 random bytes); only a hash and a prefix are kept", (t) => {
  const keys = new Set(Array.from({ length: 200 }, generateApiKey));
  t.is(keys.size, 200);
  for (const key of keys) t.regex(key, /^gw_[0-9A-Za-z]{43}$/);
  const key = [...keys][0]!;
  t.true(KEY_PATTERN.test(key));
  t.is(hashApiKey(key).length, 64);
  t.is(visiblePrefix(key), key.slice(0, 11));
});

test("ledger: reservations hold credits until settled; settling appends a usage row", async (t) => {
  const directory = mkdtempSync(path.join(os.tmpdir(), "gw-ledger-"));
  const log = UsageLog.open(directory);
  const ledger = new CreditLedger(log, () => new Date("2026-03-15T00:00:00Z"));
  const first = ledger.reserve("agent", 100, 60);
  t.throws(() => ledger.reserve("agent", 100, 50), { instanceOf: InsufficientCreditsError });
  await ledger.settle(first, { agent: "agent", keyPrefix: "gw_x", endpoint: "chat", model: "m", provider: "p", units: {}, credits: 30, requestId: "r1" });
  t.is(ledger.used("agent"), 30);
  t.is(ledger.remaining("agent", 100), 70);
  const second = ledger.reserve("agent", 100, 70);
  ledger.release(second);
  ledger.release(second);
  t.is(ledger.remaining("agent", 100), 70, "releasing twice does not free credits twice");
  log.close();
  const rows = readFileSync(path.join(directory, "2026-03.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  t.is(rows.length, 1);
  t.is(rows[0].credits, 30);
  t.is(UsageLog.open(directory, new Date("2026-03-20T00:00:00Z")).creditsUsed("agent", "2026-03"), 30, "totals are rebuilt from the log");
});
