// Pure pieces of the domain: route resolution, weights, pricing, rate limiting, keys, ledger.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { z } from "zod";
import { DEFAULT_PLANS, type RouteConfig, routeSchema } from "../src/config/config-schema.js";
import { type Account, CreditLedger } from "../src/gateway/billing/credit-ledger.js";
import { creditsForTokens } from "../src/gateway/billing/pricing.js";
import { InsufficientCreditsError, InvalidRequestError, ModelNotFoundError, ModelRequiresUpgradeError } from "../src/gateway/errors.js";
import { parseWithSchema } from "../src/gateway/request-schema.js";
import { LatencyTracker } from "../src/gateway/routing/latency-tracker.js";
import { resolveRoutes, weightedOrder } from "../src/gateway/routing/route-resolver.js";
import { formatReset } from "../src/server/rate-limit-headers.js";
import { generateApiKey, hashApiKey, KEY_PATTERN, visiblePrefix } from "../src/store/api-keys.js";
import { LocalCreditStore } from "../src/store/local-credit-store.js";
import { LocalRateBuckets } from "../src/store/local-rate-buckets.js";
import type { KeyRecord } from "../src/store/records.js";
import { UsageLog } from "../src/store/usage-log.js";
import { tempSubdir } from "./helpers/temp-dirs.js";

const route = (value: Partial<RouteConfig> & { prefix: string }): RouteConfig => routeSchema.parse(value);
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

test("ledger: a key's monthly budget and its agent's plan both hold; the 402 names the one that ran out", async (t) => {
  const directory = tempSubdir("gw-ledger-", "usage");
  const log = UsageLog.open(directory);
  const ledger = new CreditLedger(new LocalCreditStore(log), () => new Date("2026-03-15T00:00:00Z"));
  const budgeted = account("agent", 1000, { prefix: "gw_budget", budget: { credits: 100, period: "month" } });
  const unlimited = account("agent", 1000, { prefix: "gw_other" });
  const first = await ledger.reserve(budgeted, 60);
  const refused = await t.throwsAsync(ledger.reserve(budgeted, 50), { instanceOf: InsufficientCreditsError });
  t.regex(refused.message, /40 left this month of this key's budget of 100 a month/);
  await ledger.settle(first, { agent: "agent", keyPrefix: "gw_budget", endpoint: "chat", model: "m", provider: "p", units: {}, credits: 60, requestId: "r1" });
  t.like(await ledger.balance(budgeted), { keySpent: 60, keyHeld: 0 });
  t.deepEqual(await ledger.spendable(budgeted), { credits: 40, limit: "key" });
  t.deepEqual(await ledger.spendable(unlimited), { credits: 940, limit: "plan" }, "the agent's other key is limited by the plan only");
  const big = await ledger.reserve(unlimited, 930);
  const plan = await t.throwsAsync(ledger.reserve(budgeted, 20), { instanceOf: InsufficientCreditsError });
  t.regex(plan.message, /10 left this period on the agent's plan/, "the plan ran out before the key's budget");
  ledger.release(big);
  log.close();
});

test("ledger: a lifetime budget counts earlier months, read once and kept in key-totals.json", async (t) => {
  const directory = tempSubdir("gw-ledger-", "usage");
  const row = (time: string, keyPrefix: string, credits: number) =>
    `${JSON.stringify({ id: time, time, agent: "agent", keyPrefix, endpoint: "chat", model: "m", provider: "p", units: {}, credits, requestId: "r" })}\n`;
  writeFileSync(path.join(directory, "2026-01.jsonl"), row("2026-01-10T00:00:00Z", "gw_life", 50) + row("2026-01-11T00:00:00Z", "gw_other", 500));
  writeFileSync(path.join(directory, "2026-02.jsonl"), row("2026-02-10T00:00:00Z", "gw_life", 20));
  const log = UsageLog.open(directory, new Date("2026-03-15T00:00:00Z"));
  const ledger = new CreditLedger(new LocalCreditStore(log), () => new Date("2026-03-15T00:00:00Z"));
  const lifetime = account("agent", 10_000, { prefix: "gw_life", budget: { credits: 100, period: "total" } });
  const monthly = account("agent", 10_000, { prefix: "gw_life", budget: { credits: 100, period: "month" } });
  t.deepEqual(await ledger.spendable(lifetime), { credits: 30, limit: "key" });
  t.deepEqual(await ledger.spendable(monthly), { credits: 100, limit: "key" }, "a monthly budget starts afresh");
  const refused = await t.throwsAsync(ledger.reserve(lifetime, 31), { instanceOf: InsufficientCreditsError });
  t.regex(refused.message, /30 left of this key's lifetime budget of 100/);
  await ledger.settle(await ledger.reserve(lifetime, 30), {
    agent: "agent",
    keyPrefix: "gw_life",
    endpoint: "chat",
    model: "m",
    provider: "p",
    units: {},
    credits: 25,
    requestId: "r2",
  });
  t.is((await ledger.balance(lifetime)).keySpent, 95);
  t.deepEqual(JSON.parse(readFileSync(path.join(directory, "key-totals.json"), "utf8")), {
    "2026-01": { gw_life: 50, gw_other: 500 },
    "2026-02": { gw_life: 20 },
  });
  log.close();
});

test("rate limiter: a bucket of `perMinute`, refilled continuously, answers seconds to wait", async (t) => {
  let now = 0;
  const limiter = new LocalRateBuckets(() => now);
  for (let index = 0; index < 3; index += 1) t.is((await limiter.admit("k", 3)).retryAfterSeconds, 0);
  const refused = await limiter.admit("k", 3);
  t.is(refused.retryAfterSeconds, 20);
  t.is(refused.refusedBy, "requests");
  t.deepEqual(refused.requests, { limit: 3, remaining: 0, resetMs: 60_000 });
  t.is((await limiter.admit("other", 3)).retryAfterSeconds, 0);
  now += 20_000;
  t.deepEqual((await limiter.admit("k", 3)).requests, { limit: 3, remaining: 0, resetMs: 60_000 }, "one refilled, and taken");
  t.true((await limiter.admit("k", 3)).retryAfterSeconds > 0);
});

test("rate limiter: tokens per minute are spent after the call; a key over them waits until it has paid them back", async (t) => {
  let now = 0;
  const limiter = new LocalRateBuckets(() => now);
  const first = await limiter.admit("k", 100, 1000);
  t.deepEqual(first.tokens, { limit: 1000, remaining: 1000, resetMs: 0 });
  limiter.spendTokens("k", 1500);
  const refused = await limiter.admit("k", 100, 1000);
  t.is(refused.refusedBy, "tokens");
  t.is(refused.retryAfterSeconds, 31, "501 tokens to earn back at 1000 a minute");
  t.is(refused.requests.remaining, 99, "a refused request takes nothing");
  now += 30_000;
  t.is((await limiter.admit("k", 100, 1000)).refusedBy, "tokens");
  now += 1_000;
  const admitted = await limiter.admit("k", 100, 1000);
  t.is(admitted.refusedBy, undefined);
  t.is(admitted.tokens?.remaining, 16, "-500 + 31 s x 1000/min");
  limiter.spendTokens("no-limit", 10_000);
  t.is((await limiter.admit("no-limit", 100)).refusedBy, undefined, "tokens of a key without a token limit are not counted");
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
  const directory = tempSubdir("gw-ledger-", "usage");
  const log = UsageLog.open(directory);
  const ledger = new CreditLedger(new LocalCreditStore(log), () => new Date("2026-03-15T00:00:00Z"));
  const first = await ledger.reserve(account("agent", 100), 60);
  await t.throwsAsync(ledger.reserve(account("agent", 100), 50), { instanceOf: InsufficientCreditsError });
  await ledger.settle(first, { agent: "agent", keyPrefix: "gw_x", endpoint: "chat", model: "m", provider: "p", units: {}, credits: 30, requestId: "r1" });
  t.deepEqual(await ledger.planBalance("agent", 100), { used: 30, remaining: 70 });
  const second = await ledger.reserve(account("agent", 100), 40);
  await ledger.reserve(account("agent", 100), 30);
  ledger.release(second);
  ledger.release(second);
  t.deepEqual(await ledger.planBalance("agent", 100), { used: 30, remaining: 40 }, "releasing twice does not free credits twice");
  log.close();
  const rows = readFileSync(path.join(directory, "2026-03.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  t.is(rows.length, 1);
  t.is(rows[0].credits, 30);
  t.is(UsageLog.open(directory, new Date("2026-03-20T00:00:00Z")).creditsUsed("agent", "2026-03"), 30, "totals are rebuilt from the log");
});

/** A caller of `agentId` on a plan of `allowance` credits, with the key's own limits. */
function account(agentId: string, allowance: number, key: Partial<KeyRecord> = {}): Account {
  return {
    caller: {
      agent: { id: agentId, name: agentId, plan: "pro", createdAt: "2026-01-01T00:00:00Z" },
      key: { id: "key_1", prefix: "gw_x", hash: "", agentId, createdAt: "2026-01-01T00:00:00Z", revokedAt: null, ...key },
    },
    plan: { ...DEFAULT_PLANS.pro, monthlyCredits: allowance },
  };
}

test("request schemas: a wrong-typed field is named as invalid, an absent one as missing, an unknown one as unknown", (t) => {
  const schema = z.strictObject({ model: z.string(), n: z.number().optional() });
  const message = (body: Record<string, unknown>) => t.throws(() => parseWithSchema(schema, body), { instanceOf: InvalidRequestError }).message;
  t.is(message({ model: 5 }), "Invalid 'model': Invalid input: expected string, received number.");
  t.is(message({}), "Missing required parameter: 'model'.");
  t.is(message({ model: "m", extra: 1 }), "Unknown parameter: 'extra'.");
});

test("rate-limit reset times are in OpenAI's form", (t) => {
  t.is(formatReset(0), "0ms");
  t.is(formatReset(19.2), "20ms");
  t.is(formatReset(1500), "1.5s");
  t.is(formatReset(59_999), "59.999s");
  t.is(formatReset(360_000), "6m0s");
  t.is(formatReset(61_500), "1m2s");
});
