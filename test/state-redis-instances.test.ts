// Several gw servers on one Redis, as a deployment behind a load balancer runs them: each has its
// own home (config and blobs) and they share keys, balances, holds and rate limits through a real
// redis-server. Requests are spread over the instances in turn; what one instance does must hold
// on every other (issue 23's "nothing double-spent").
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { visiblePrefix } from "../src/store/api-keys.js";
import { createKey, revokeKey } from "../src/store/provisioning.js";
import { periodOf } from "../src/store/usage-log.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { gw, makeHome, quietLogger, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

const INSTANCES = 4;
const SIGNING_SECRET = "instances-share-this-link-signing-secret-0123456789";
const SHARED_BLOBS = tempDir("gw-shared-blobs-");

let redis: TestRedis;
let openai: FakeOpenAI;
let instances: TestGateway[] = [];

/** One credit per token; plans by name with exact allowances and request rates. */
function configure(config: RawConfig): void {
  // What a Redis state requires of every home: one link secret, one place for the files.
  config.storage = { signingSecret: SIGNING_SECRET, options: { base: SHARED_BLOBS } };
  config.upstream = { retries: 0, retryBaseDelayMs: 1, breakerFailureThreshold: 0 };
  config.providers = { up: { type: "openai", baseUrl: openai.url, apiKey: "sk-up" } };
  config.routes = [{ prefix: "m/", provider: "up", priority: 1 }];
  config.models = [{ id: "m/cheap", name: "Cheap", context_length: 200_000, max_output_tokens: 5000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }];
  config.plans = {
    ten_calls: { monthlyCredits: 10 * CALL_HOLD, freeTierOnly: false, requestsPerMinute: 6000 },
    roomy: { monthlyCredits: 10_000_000, freeTierOnly: false, requestsPerMinute: 6000 },
    ten_a_minute: { monthlyCredits: 10_000_000, freeTierOnly: false, requestsPerMinute: 10 },
  };
}

const MAX_TOKENS = 20;
/** What one call holds: its prompt's estimate and max_tokens, measured once in `before`. */
let CALL_HOLD = 0;
const body = { model: "m/cheap", max_tokens: MAX_TOKENS, messages: [{ role: "user", content: "hi" }] };

test.before(async () => {
  redis = await startRedis();
  openai = await startFakeOpenAI();
  // The fake reports exactly max_tokens of output: every call is billed the most it could cost.
  openai.set({ usage: { prompt_tokens: 1, completion_tokens: MAX_TOKENS } });
  CALL_HOLD = 1 + MAX_TOKENS;
  const state = { driver: "redis" as const, url: redis.socket, prefix: "inst:" };
  for (let index = 0; index < INSTANCES; index += 1) instances.push(await startTestGateway(await makeHome(configure), { state }));
});

test.after.always(async () => {
  await Promise.all(instances.map((instance) => instance.shutdown()));
  instances = [];
  await openai?.close();
  await redis?.stop();
});

/** A new key, created through one instance's store (as `gw keys create` against Redis will). */
async function newKey(agent: string, plan: string, limits: Parameters<typeof createKey>[4] = {}, through = 0): Promise<{ key: string; prefix: string }> {
  const created = await createKey(instances[through]!.gateway.store, agent, plan, "free", limits);
  return { key: created.key, prefix: created.record.prefix };
}

function chat(instance: TestGateway, key: string): Promise<Response> {
  return fetch(`${instance.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

function keyInfo(instance: TestGateway, key: string): Promise<Response> {
  return fetch(`${instance.v1}/key`, { headers: { authorization: `Bearer ${key}` } });
}

/** The agent's usage rows as every instance's ledger reads them: the same balance everywhere. */
async function planUsed(agent: string): Promise<number[]> {
  return Promise.all(
    instances.map(async (instance) => {
      const id = instance.gateway.store.data.agents.find((entry) => entry.name === agent)?.id;
      if (!id) throw new Error(`instance has no agent ${agent}`);
      return (await instance.gateway.ledger.planBalance(id, 0)).used;
    }),
  );
}

test.serial("a key created through one instance works on every other at once; revoked, it stops on all of them", async (t) => {
  const { key, prefix } = await newKey("newcomer", "roomy", {}, 1);
  for (const instance of instances) t.is((await keyInfo(instance, key)).status, 200, `instance ${instances.indexOf(instance)}`);
  const revokedAt = performance.now();
  await revokeKey(instances[2]!.gateway.store, prefix);
  const waits = await Promise.all(
    instances.map(async (instance, index) => {
      await eventually(async () => (await keyInfo(instance, key)).status === 401, `instance ${index} refusing the revoked key`);
      return Math.round(performance.now() - revokedAt);
    }),
  );
  t.log(`revocation seen by every instance after ${waits.join(" / ")} ms`);
  const refused = await keyInfo(instances[0]!, key);
  t.like(await refused.json(), { error: { code: "invalid_api_key" } });
});

test.serial("100 requests spread over the instances against a plan for 10 calls never spend more than the plan", async (t) => {
  const { key } = await newKey("ten-calls", "ten_calls");
  const responses = await Promise.all(Array.from({ length: 100 }, (_, index) => chat(instances[index % INSTANCES]!, key)));
  const statuses = responses.map((response) => response.status);
  await Promise.all(responses.map((response) => response.arrayBuffer()));
  const served = statuses.filter((status) => status === 200).length;
  t.true(
    statuses.every((status) => status === 200 || status === 402),
    statuses.join(","),
  );
  t.true(served >= 1 && served <= 10, `${served} served`);
  const used = await planUsed("ten-calls");
  t.deepEqual(used, Array(INSTANCES).fill(served * CALL_HOLD), "every instance reads the same balance, the calls served");
  t.true(used[0]! <= 10 * CALL_HOLD);
  // Nothing is left held, on any instance: what remains is the plan less what was billed.
  const id = instances[0]!.gateway.store.data.agents.find((entry) => entry.name === "ten-calls")!.id;
  for (const instance of instances) t.is((await instance.gateway.ledger.planBalance(id, 10 * CALL_HOLD)).remaining, (10 - served) * CALL_HOLD);
});

test.serial("100 requests spread over the instances against a key budget for 10 calls never spend more than the budget", async (t) => {
  const { key } = await newKey("budgeted", "roomy", { budget: { credits: 10 * CALL_HOLD, period: "month" } });
  const responses = await Promise.all(Array.from({ length: 100 }, (_, index) => chat(instances[index % INSTANCES]!, key)));
  const statuses = responses.map((response) => response.status);
  const bodies = await Promise.all(responses.map((response) => response.text()));
  const served = statuses.filter((status) => status === 200).length;
  t.true(served >= 1 && served <= 10, `${served} served`);
  const refusal = bodies[statuses.indexOf(402)];
  t.regex(refusal ?? "", /key's budget/);
  for (const instance of instances) {
    const info = (await (await keyInfo(instance, key)).json()) as { data: { budget: { spent: number; remaining: number } } };
    t.deepEqual(info.data.budget, { limit: 10 * CALL_HOLD, period: "month", spent: served * CALL_HOLD, remaining: (10 - served) * CALL_HOLD });
  }
});

test.serial("a rate limit of 10 a minute admits 10 requests across all instances together", async (t) => {
  const { key } = await newKey("paced", "ten_a_minute");
  const responses = await Promise.all(Array.from({ length: 30 }, (_, index) => keyInfo(instances[index % INSTANCES]!, key)));
  await Promise.all(responses.map((response) => response.arrayBuffer()));
  const statuses = responses.map((response) => response.status);
  t.is(statuses.filter((status) => status === 200).length, 10, statuses.join(","));
  t.is(statuses.filter((status) => status === 429).length, 20);
  const limited = responses.find((response) => response.status === 429)!;
  t.true(Number(limited.headers.get("retry-after")) >= 1);
  t.is(limited.headers.get("x-ratelimit-remaining-requests"), "0");
});

test.serial("a stored response made through one instance is continued through another", async (t) => {
  const { key } = await newKey("conversing", "roomy");
  const post = (instance: TestGateway, payload: Record<string, unknown>) =>
    fetch(`${instance.v1}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m/cheap", max_output_tokens: 20, ...payload }),
    });
  const first = await post(instances[0]!, { input: "remember the word teal" });
  t.is(first.status, 200);
  const { id } = (await first.json()) as { id: string };
  const second = await post(instances[3]!, { input: "which word?", previous_response_id: id });
  t.is(second.status, 200, await second.clone().text());
  const upstream = openai.requests.at(-1)!.body as { messages: Array<{ content: unknown }> };
  t.true(JSON.stringify(upstream.messages).includes("remember the word teal"), "the earlier turn reached the upstream");
  t.is((await fetch(`${instances[2]!.v1}/responses/${id}`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
});

test.serial("an answer cached through one instance is a hit on every other, and on no other agent", async (t) => {
  const { key } = await newKey("caching", "roomy", { cacheTtlSeconds: 600 });
  const { key: otherAgent } = await newKey("caching-other", "roomy", { cacheTtlSeconds: 600 });
  const cached = { ...body, temperature: 0, messages: [{ role: "user", content: "cached across instances" }] };
  const ask = (instance: TestGateway, apiKey: string) =>
    fetch(`${instance.v1}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(cached),
    });
  const before = openai.requests.length;
  const first = await ask(instances[0]!, key);
  t.is(first.headers.get("x-gw-cache"), "miss");
  const firstText = await first.text();
  for (const instance of instances.slice(1)) {
    const hit = await ask(instance, key);
    t.is(hit.headers.get("x-gw-cache"), "hit");
    t.is(await hit.text(), firstText);
  }
  t.is(openai.requests.length, before + 1, "one upstream call for all four instances");
  t.is((await ask(instances[2]!, otherAgent)).headers.get("x-gw-cache"), "miss");
  t.is(openai.requests.length, before + 2);
});

test.serial("a batch created through one instance is run once and read through any other", async (t) => {
  const { key } = await newKey("batching", "roomy");
  const lines = Array.from({ length: 12 }, (_, index) =>
    JSON.stringify({
      custom_id: `line-${index}`,
      method: "POST",
      url: "/v1/chat/completions",
      body: { ...body, messages: [{ role: "user", content: `batch ${index}` }] },
    }),
  );
  const form = new FormData();
  form.append("purpose", "batch");
  form.append("file", new Blob([`${lines.join("\n")}\n`]), "input.jsonl");
  const headers = { authorization: `Bearer ${key}` };
  const file = (await (await fetch(`${instances[0]!.v1}/files`, { method: "POST", headers, body: form })).json()) as { id: string };
  const before = openai.requests.length;
  const created = await fetch(`${instances[1]!.v1}/batches`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" }),
  });
  t.is(created.status, 200);
  const { id } = (await created.json()) as { id: string };
  const done = await eventually(async () => (await (await fetch(`${instances[3]!.v1}/batches/${id}`, { headers })).json()) as Record<string, any>, {
    what: "the batch to complete",
    until: (batch) => batch.status === "completed",
  });
  t.deepEqual(done.request_counts, { total: 12, completed: 12, failed: 0 });
  const output = await (await fetch(`${instances[2]!.v1}/files/${done.output_file_id}/content`, { headers })).text();
  t.is(output.trim().split("\n").length, 12);
  t.is(openai.requests.length - before, 12, "each line ran once, on one instance");
  const page = (await (await fetch(`${instances[0]!.v1}/batches`, { headers })).json()) as { data: Array<{ id: string }> };
  t.deepEqual(
    page.data.map((batch) => batch.id),
    [id],
  );
});

test.serial("no instance keeps a usage row of its own: the rows are the shared ledger's", (t) => {
  for (const instance of instances) {
    t.is(instance.gateway.state.usageLog, undefined);
    const files = existsSync(homePaths(instance.home).usageDir) ? readdirSync(homePaths(instance.home).usageDir) : [];
    t.deepEqual(
      files.filter((name) => name.endsWith(".jsonl")),
      [],
    );
  }
});

test.serial("Redis hung: requests get 503 state_unavailable, /ready fails and /health stays up; service resumes by itself", async (t) => {
  const { key } = await newKey("through-outage", "roomy");
  t.is((await chat(instances[0]!, key)).status, 200);
  redis.pause();
  try {
    const [answer, info, ready, health] = await Promise.all([
      chat(instances[1]!, key),
      keyInfo(instances[2]!, key),
      fetch(`${instances[3]!.url}/ready`),
      fetch(`${instances[3]!.url}/health`),
    ]);
    for (const refused of [answer, info]) {
      t.is(refused.status, 503);
      t.is(refused.headers.get("retry-after"), "1");
      const body = (await refused.json()) as { error: { code: string; message: string } };
      t.is(body.error.code, "state_unavailable");
      t.regex(body.error.message, /state store could not serve this request \(Redis [a-zA-Z.]+: no answer in time\); nothing was charged/);
      t.notRegex(body.error.message, /sock|127\.0\.0\.1|redis:\/\//, "the store's address stays in the log");
    }
    t.is(ready.status, 503);
    t.like(await ready.json(), { error: { code: "not_ready" } });
    t.is(health.status, 200);
  } finally {
    redis.resume();
  }
  const answered = await eventually(async () => (await chat(instances[1]!, key)).status, {
    what: "a call answered after Redis resumed",
    until: (status) => status === 200,
  });
  t.is(answered, 200);
  t.is((await fetch(`${instances[3]!.url}/ready`)).status, 200);
  const used = await planUsed("through-outage");
  t.deepEqual(used, Array(INSTANCES).fill(2 * CALL_HOLD), "the two calls served are billed, nothing for the refused one");
});

test.serial("a stream whose settle finds Redis hung ends normally and is billed once Redis answers again", async (t) => {
  const { key } = await newKey("streamed-through-outage", "roomy");
  openai.enqueue({ holdAfterEvents: 1 });
  const response = await fetch(`${instances[1]!.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  t.is(response.status, 200);
  const requestId = response.headers.get("x-request-id")!;
  const reader = response.body!.getReader();
  await reader.read(); // the hold is taken and content is flowing
  await eventually(() => openai.held() === 1, "the upstream stream held mid-way");
  redis.pause();
  let text = "";
  try {
    openai.releaseHeld();
    const decoder = new TextDecoder();
    // The settle does not hold the stream's end back: the client's stream ends while Redis is still hung.
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value);
    // This request's row: a call of an earlier test answered just before Redis was paused may have its own row there.
    const keptInOutbox = () =>
      quietLogger.lines.some(
        (line) =>
          line.includes(`of request ${requestId} kept in`) &&
          /usage row .* kept in .*usage-outbox\.jsonl until the state store answers \(Redis credits\.settle: no answer in time\)/.test(line),
      );
    // The settle went out before the stream's last bytes; Redis's answer to it is not waited for
    // (it is due only after the command timeout, 1.5 s).
    t.false(keptInOutbox(), "the stream ended before its settle timed out");
    await eventually(keptInOutbox, "the row waited in the instance's outbox");
  } finally {
    redis.resume();
  }
  t.true(text.trimEnd().endsWith("data: [DONE]"), "the client's stream ended as usual");
  t.notRegex(text, /"error"/);
  // The stream reported no usage: it is billed from what was relayed, once, as every instance reads it.
  const used = await eventually(() => planUsed("streamed-through-outage"), {
    what: "the row kept in the outbox reaching Redis",
    until: (values) => values[0]! > 0 && values.every((value) => value === values[0]),
  });
  t.true(used[0]! <= CALL_HOLD);
  const agentId = instances[0]!.gateway.store.data.agents.find((entry) => entry.name === "streamed-through-outage")!.id;
  const rows = (await redis.client().xrange(`inst:usage:${periodOf(new Date())}`, "-", "+"))
    .map(([, fields]) => JSON.parse(fields[1]!) as { agent: string; credits: number })
    .filter((row) => row.agent === agentId);
  t.deepEqual(
    rows.map((row) => row.credits),
    [used[0]],
    "one row in the shared usage stream",
  );
  await eventually(() => readFileSync(path.join(homePaths(instances[1]!.home).dataDir, "usage-outbox.jsonl"), "utf8") === "", "the outbox emptied");
});

test.serial("gw keys create and revoke on a home whose config puts the state in Redis reach every instance; gw usage reads their rows", async (t) => {
  const operator = await makeHome((config) => {
    configure(config);
    config.state = { driver: "redis", url: redis.socket, prefix: "inst:" };
  });
  const created = await gw(["keys", "create", "--agent", "cli-made", "--plan", "roomy", "--json"], { home: operator });
  t.is(created.code, 0, created.stderr);
  const { key } = JSON.parse(created.stdout) as { key: string };
  const prefix = visiblePrefix(key);
  for (const instance of instances) t.is((await keyInfo(instance, key)).status, 200);
  t.false(existsSync(homePaths(operator).metadata) && readFileSync(homePaths(operator).metadata, "utf8").includes(prefix), "not written to the home's file");
  const revoked = await gw(["keys", "revoke", prefix], { home: operator });
  t.is(revoked.code, 0, revoked.stderr);
  for (const [index, instance] of instances.entries())
    await eventually(async () => (await keyInfo(instance, key)).status === 401, `instance ${index} refusing the key revoked by gw`);
  const usage = await gw(["usage", "--json"], { home: operator });
  t.is(usage.code, 0, usage.stderr);
  t.true((JSON.parse(usage.stdout) as { rows: unknown[] }).rows.length > 0, "the rows in Redis's stream, not this home's empty log");
});

test("a home that puts the state in Redis without a shared signing secret, or a blob store every instance reads, is refused naming the field", async (t) => {
  const withState = (storage: Record<string, unknown>) =>
    makeHome((config) => {
      configure(config);
      config.state = { driver: "redis", url: redis.socket, prefix: `refused${Math.random()}:` };
      config.storage = storage;
    });
  const unsigned = await t.throwsAsync(startTestGateway(await withState({})));
  t.regex(unsigned.message, /storage\.signingSecret: the redis state is shared by several instances, which must sign links with one secret/);
  const local = await t.throwsAsync(startTestGateway(await withState({ signingSecret: SIGNING_SECRET })));
  t.regex(local.message, /storage\.driver: the redis state is shared by several instances, whose files must be stored where all of them read/);
});
