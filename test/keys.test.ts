// Keys with their own limits (docs/decisions.md §10): a budget held atomically with the agent's
// plan, expiry, model patterns, requests and tokens per minute, the x-ratelimit-* headers on every
// authenticated answer, and GET /v1/key.
import test from "ava";
import OpenAI from "openai";
import { homePaths } from "../src/config/paths.js";
import { MetadataStore } from "../src/store/metadata-store.js";
import { setKeyLimits } from "../src/store/provisioning.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let upstream: FakeOpenAI;
let images: FakeOpenAIImages;
let gateway: TestGateway;
let home: string;
let now = Date.parse("2026-11-10T12:00:00Z");

test.before(async () => {
  upstream = await startFakeOpenAI();
  images = await startFakeOpenAIImages();
  home = await makeHome((config) => {
    config.upstream = { retries: 0, retryBaseDelayMs: 1, breakerFailureThreshold: 0 };
    config.providers = { up: { type: "openai", baseUrl: upstream.url, apiKey: "sk-up" }, openai: { type: "openai", baseUrl: images.url, apiKey: "sk-img" } };
    config.tools.image = { default: "openai/gpt-image-1", allow: [] };
    config.routes = [
      { prefix: "m/", provider: "up", priority: 1 },
      { prefix: "x/", provider: "up", priority: 1 },
    ];
    config.models = [
      { id: "m/cheap", name: "Cheap", context_length: 200_000, max_output_tokens: 5000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } },
      { id: "m/other", name: "Other", context_length: 200_000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } },
      { id: "x/secret", name: "Secret", context_length: 200_000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } },
    ];
    config.plans.roomy = { monthlyCredits: 1_000_000, freeTierOnly: false, requestsPerMinute: 6000 };
    config.plans.empty = { monthlyCredits: 0, freeTierOnly: false, requestsPerMinute: 6000 };
  });
  gateway = await startTestGateway(home, { now: () => now });
});

test.after.always(async () => {
  await gateway?.shutdown();
  await upstream?.close();
  await images?.close();
});

test.beforeEach(() => upstream.reset());

function call(key: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${gateway.v1}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const chatBody = (model = "m/cheap") => ({ model, max_tokens: 20, messages: [{ role: "user" as const, content: "hi" }] });

function keySpent(prefix: string): number {
  return UsageLog.readRows(homePaths(home).usageDir, periodOf(new Date(now)))
    .filter((row) => row.keyPrefix === prefix)
    .reduce((sum, row) => sum + row.credits, 0);
}

test.serial("a key's budget holds under 50 parallel requests: never below zero, and the 402 says the key's budget ran out", async (t) => {
  // Each call costs at most 1,023 credits reserved (1,003 input bytes bound + 20 output), 1,023 billed.
  const key = await addKey(home, "budgeted", "roomy", { budget: { credits: 10 * 1023, period: "month" } });
  const prefix = key.slice(0, 11);
  upstream.set({ firstByteDelayMs: 300, content: "ok", usage: { prompt_tokens: 1003, completion_tokens: 20 } });
  const prompt = "x".repeat(1000);
  const results = await Promise.all(
    Array.from({ length: 50 }, () => call(key, "/chat/completions", { model: "m/cheap", max_tokens: 20, messages: [{ role: "user", content: prompt }] })),
  );
  const answered = results.filter((response) => response.status === 200).length;
  const refused = results.filter((response) => response.status === 402);
  t.is(answered + refused.length, 50);
  t.true(answered >= 1 && answered <= 10, `${answered} answered`);
  t.is(upstream.requests.length, answered, "refused calls never reached the upstream");
  t.true(keySpent(prefix) <= 10 * 1023, `spent ${keySpent(prefix)}`);
  const body = (await refused[0]!.json()) as { error: { code: string; message: string } };
  t.is(body.error.code, "insufficient_credits");
  t.regex(body.error.message, /left this month of this key's budget of 10230 a month/);

  // The agent's other key, without a budget, still spends from the plan.
  const other = await addKey(home, "budgeted", "roomy");
  upstream.set({ firstByteDelayMs: 0 });
  t.is((await call(other, "/chat/completions", chatBody())).status, 200);
});

test.serial("the plan runs out before the key's budget: the 402 names the plan", async (t) => {
  const key = await addKey(home, "smallplan", "empty", { budget: { credits: 1_000_000_000, period: "total" } });
  const response = await call(key, "/chat/completions", chatBody());
  t.is(response.status, 402);
  const body = (await response.json()) as { error: { message: string } };
  t.regex(body.error.message, /left this period on the agent's plan/);
});

test.serial("an expired key answers 401 saying it expired; an unknown key learns nothing more", async (t) => {
  const key = await addKey(home, "temp", "roomy", { expiresAt: new Date(now + 60_000).toISOString() });
  t.is((await call(key, "/models")).status, 200);
  now += 61_000;
  const expired = await call(key, "/models");
  t.is(expired.status, 401);
  const body = (await expired.json()) as { error: { code: string; message: string } };
  t.is(body.error.code, "invalid_api_key");
  t.regex(body.error.message, /expired at 2026-11-10T12:01:00\.000Z/);
  t.is(expired.headers.get("x-ratelimit-limit-requests"), null, "an unauthenticated answer carries no rate limits");
  const unknown = await call(`gw_${"A".repeat(43)}`, "/models");
  t.is(unknown.status, 401);
  t.notRegex(((await unknown.json()) as { error: { message: string } }).error.message, /expired/);
  const anthropicStyle = await fetch(`${gateway.url}/anthropic/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "m/cheap", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
  });
  t.is(anthropicStyle.status, 401);
  t.regex(((await anthropicStyle.json()) as { error: { message: string } }).error.message, /expired/);
});

test.serial("a model outside the key's patterns is 403 model_not_allowed before any upstream call; /v1/models lists only what it may use", async (t) => {
  const key = await addKey(home, "narrow", "roomy", { models: ["m/*"] });
  const refused = await call(key, "/chat/completions", chatBody("x/secret"));
  t.is(refused.status, 403);
  const body = (await refused.json()) as { error: { code: string; message: string; param: string } };
  t.is(body.error.code, "model_not_allowed");
  t.is(body.error.param, "model");
  t.regex(body.error.message, /may not use the model `x\/secret`; it may use: m\/\*/);
  t.is(upstream.requests.length, 0);
  t.is((await call(key, "/chat/completions", chatBody("m/other"))).status, 200);
  const models = (await (await call(key, "/models")).json()) as { data: Array<{ id: string }> };
  t.deepEqual(models.data.map((model) => model.id).sort(), ["m/cheap", "m/other"]);

  // Through the official SDK, as a user sees it.
  const client = new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
  const error = await t.throwsAsync(client.chat.completions.create(chatBody("x/secret")));
  t.is((error as InstanceType<typeof OpenAI.APIError>).status, 403);
});

test.serial("requests per minute: the key's own limit, the x-ratelimit-* headers counting down, then 429 with Retry-After", async (t) => {
  const key = await addKey(home, "counted", "roomy", { rpm: 3 });
  const seen: Array<[string | null, string | null]> = [];
  for (let index = 0; index < 3; index += 1) {
    const response = await call(key, "/key");
    t.is(response.status, 200);
    t.is(response.headers.get("x-ratelimit-limit-requests"), "3");
    seen.push([response.headers.get("x-ratelimit-remaining-requests"), response.headers.get("x-ratelimit-reset-requests")]);
    t.is(response.headers.get("x-ratelimit-limit-tokens"), null, "no token limit, no token headers");
  }
  t.deepEqual(
    seen.map(([remaining]) => remaining),
    ["2", "1", "0"],
  );
  t.regex(seen[2]![1]!, /^(\d+(\.\d+)?s|\d+ms|1m0s)$/);
  const refused = await call(key, "/key");
  t.is(refused.status, 429);
  t.is(refused.headers.get("x-ratelimit-remaining-requests"), "0");
  t.truthy(refused.headers.get("retry-after"));
  t.regex(((await refused.json()) as { error: { message: string } }).error.message, /3 requests per minute/);
});

test.serial("tokens per minute: a key that used its tokens is refused until they are earned back; token headers count down", async (t) => {
  const key = await addKey(home, "tokens", "roomy", { tpm: 100 });
  // Within what each call holds (max_tokens 20, a short prompt): more would count only that (ledger-leftovers.test.ts).
  upstream.set({ content: "ok", usage: { prompt_tokens: 40, completion_tokens: 20 } });
  const first = await call(key, "/chat/completions", chatBody());
  t.is(first.status, 200);
  t.is(first.headers.get("x-ratelimit-limit-tokens"), "100");
  t.is(first.headers.get("x-ratelimit-remaining-tokens"), "100", "counted once the call's usage is known");
  const second = await call(key, "/chat/completions", chatBody());
  t.is(second.status, 200);
  t.is(second.headers.get("x-ratelimit-remaining-tokens"), "40");
  const refused = await call(key, "/chat/completions", chatBody());
  t.is(refused.status, 429);
  t.regex(((await refused.json()) as { error: { message: string } }).error.message, /100 tokens per minute/);
  t.is(refused.headers.get("x-ratelimit-remaining-tokens"), "0");
  t.is(upstream.requests.length, 2);
});

test.serial("the rate-limit headers are on streams and on the messages endpoint too", async (t) => {
  const key = await addKey(home, "streamer", "roomy", { rpm: 50 });
  const stream = await call(key, "/chat/completions", { ...chatBody(), stream: true });
  t.is(stream.status, 200);
  t.regex(stream.headers.get("content-type") ?? "", /^text\/event-stream/);
  t.is(stream.headers.get("x-ratelimit-limit-requests"), "50");
  t.is(stream.headers.get("x-ratelimit-remaining-requests"), "49");
  await stream.text();
  const messages = await fetch(`${gateway.url}/anthropic/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "m/cheap", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
  });
  t.is(messages.status, 200);
  t.is(messages.headers.get("x-ratelimit-remaining-requests"), "48");
});

test.serial(
  "a metered call counts its request with its credit hold; one that fails before is counted too, and once over the limit 429 comes before its error",
  async (t) => {
    const key = await addKey(home, "orderly", "roomy", { rpm: 3 });
    const before = upstream.requests.length;
    const invalid = await call(key, "/chat/completions", { model: "m/cheap" });
    t.is(invalid.status, 400);
    t.is(invalid.headers.get("x-ratelimit-remaining-requests"), "2");
    const unknown = await call(key, "/chat/completions", chatBody("nowhere/none"));
    t.true(unknown.status >= 400 && unknown.status < 500 && unknown.status !== 429, `status ${unknown.status}`);
    t.is(unknown.headers.get("x-ratelimit-remaining-requests"), "1");
    const answered = await call(key, "/chat/completions", chatBody());
    t.is(answered.status, 200);
    t.is(answered.headers.get("x-ratelimit-remaining-requests"), "0");
    for (const [path, body] of [
      ["/chat/completions", { model: "m/cheap" }],
      ["/chat/completions", chatBody()],
      ["/responses", { model: "m/cheap", input: 42 }],
      ["/embeddings", { model: "m/cheap" }],
    ] as const) {
      const refused = await call(key, path, body);
      t.is(refused.status, 429, path);
      t.is(refused.headers.get("x-ratelimit-remaining-requests"), "0");
      t.truthy(refused.headers.get("retry-after"));
    }
    const messages = await fetch(`${gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: "{not json",
    });
    t.is(messages.status, 429);
    t.is(messages.headers.get("x-ratelimit-remaining-requests"), "0");
    t.is(upstream.requests.length - before, 1, "only the one admitted valid call reached the upstream");
  },
);

test.serial("the rate-limit headers are on errors after authentication too (a 402)", async (t) => {
  const key = await addKey(home, "broke", "roomy", { budget: { credits: 0, period: "month" } });
  const response = await call(key, "/chat/completions", chatBody());
  t.is(response.status, 402);
  t.truthy(response.headers.get("x-ratelimit-limit-requests"));
  t.truthy(response.headers.get("x-ratelimit-remaining-requests"));
});

test.serial("GET /v1/key: the key's label, limits and spend; gw keys set on a running server applies to the next request", async (t) => {
  const key = await addKey(home, "reader", "roomy", {
    name: "nightly batch",
    budget: { credits: 50_000, period: "month" },
    models: ["m/*"],
    rpm: 100,
    tpm: 10_000,
    expiresAt: new Date(now + 86_400_000).toISOString(),
  });
  upstream.set({ content: "ok", usage: { prompt_tokens: 10, completion_tokens: 5 } });
  t.is((await call(key, "/chat/completions", chatBody())).status, 200);
  const info = (await (await call(key, "/key")).json()) as { data: Record<string, unknown> };
  t.like(info.data, {
    label: "nightly batch",
    prefix: key.slice(0, 11),
    agent: "reader",
    plan: "roomy",
    models: ["m/*"],
    rate_limit: { requests_per_minute: 100, tokens_per_minute: 10_000 },
    budget: { limit: 50_000, period: "month", spent: 15, remaining: 49_985 },
    plan_credits: { limit: 1_000_000, spent: 15, remaining: 999_985 },
    limit_remaining: 49_985,
  });
  t.is(info.data.expires_at, new Date(now + 86_400_000).toISOString());
  t.false(JSON.stringify(info).includes(key), "the key itself is never echoed");

  const store = await MetadataStore.open(homePaths(home).metadata);
  try {
    await setKeyLimits(store, key.slice(0, 11), { models: ["x/*"], budget: null });
  } finally {
    store.close();
  }
  const status = await eventually(async () => (await call(key, "/chat/completions", chatBody())).status, {
    until: (answered) => answered === 403,
    what: "the new model patterns to apply",
    intervalMs: 50,
  });
  t.is(status, 403, "the new model patterns apply without a restart");
  const after = (await (await call(key, "/key")).json()) as { data: { budget: unknown; models: string[] } };
  t.is(after.data.budget, null);
  t.deepEqual(after.data.models, ["x/*"]);
});

test.serial("the key's model patterns and budget hold on embeddings and tool endpoints too", async (t) => {
  const chatOnly = await addKey(home, "patterns", "roomy", { models: ["m/*"] });
  const refused = await call(chatOnly, "/embeddings", { model: "x/text-embedding-3-small", input: "hello" });
  t.is(refused.status, 403);
  t.is(((await refused.json()) as { error: { code: string } }).error.code, "model_not_allowed");
  t.is((await call(chatOnly, "/embeddings", { model: "m/text-embedding-3-small", input: "hello" })).status, 200);

  const picture = await fetch(`${gateway.url}/v1/image/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${chatOnly}`, "content-type": "application/json" },
    body: JSON.stringify({ prompt: "a fox" }),
  });
  t.is(picture.status, 403);
  t.regex(((await picture.json()) as { error: { message: string } }).error.message, /may not use the model `openai\/gpt-image-1`; it may use: m\/\*/);
  t.is(images.requests.length, 0, "refused before the image upstream was called");

  const broke = await addKey(home, "patterns", "roomy", { budget: { credits: 0, period: "month" } });
  const unpaid = await call(broke, "/embeddings", { model: "m/text-embedding-3-small", input: "hello" });
  t.is(unpaid.status, 402);
  t.regex(((await unpaid.json()) as { error: { message: string } }).error.message, /key's budget of 0 a month/);
});
