// The config shared through Redis (docs/decisions.md §6, §21): with `state.driver: "redis"` in
// their config.json, every instance runs the one document in Redis, seeded by the first from its
// own file, and `gw` config commands run against any home change it for all of them; each
// instance keeps its own `server` and `state` sections. Real gw servers, a real redis-server, the
// built `gw` run as a user would (needs `npm run build`).
import { readFileSync } from "node:fs";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { createKey } from "../src/store/provisioning.js";
import { gw } from "./_gw-cli.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { makeHome, quietLogger, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

const SIGNING_SECRET = "a-signing-secret-shared-by-every-instance-0123456789";
/** Interpolated by each instance when it loads the shared document, kept as written in Redis. */
const KEY_VARIABLE = "GW_SHARED_CONFIG_TEST_KEY";

let redis: TestRedis;
let upstream: FakeOpenAI;
let second: FakeOpenAI;
const running: TestGateway[] = [];

test.before(async () => {
  process.env[KEY_VARIABLE] = "sk-from-the-environment";
  redis = await startRedis();
  upstream = await startFakeOpenAI();
  second = await startFakeOpenAI();
});

test.after.always(async () => {
  await Promise.all(running.map((instance) => instance.shutdown()));
  await upstream?.close();
  await second?.close();
  await redis?.stop();
});

const SHARED_BLOBS = tempDir("gw-shared-blobs-");

/** A home whose config.json puts the state (and so the config) on the test Redis under `prefix`, routing `route` to the fake. */
function sharedHome(prefix: string, route: string, publicUrl: string): Promise<string> {
  return makeHome((config: RawConfig) => {
    config.state = { driver: "redis", url: redis.socket, prefix };
    config.server = { ...config.server, publicUrl };
    // Instances on one machine share a blob folder, as instances on several would share a bucket.
    config.storage = { ...config.storage, signingSecret: SIGNING_SECRET, options: { base: SHARED_BLOBS } };
    config.upstream = { retries: 0, retryBaseDelayMs: 1, breakerFailureThreshold: 0 };
    config.providers = { up: { type: "openai", baseUrl: upstream.url, apiKey: `\${${KEY_VARIABLE}}` } };
    config.routes = [{ prefix: route, provider: "up", priority: 1 }];
    config.plans = { roomy: { monthlyCredits: 10_000_000, freeTierOnly: false, requestsPerMinute: 6000 } };
  });
}

async function start(home: string): Promise<TestGateway> {
  const instance = await startTestGateway(home, {});
  running.push(instance);
  return instance;
}

function chat(instance: TestGateway, key: string, model: string): Promise<number> {
  return fetch(`${instance.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
  }).then(async (response) => {
    await response.arrayBuffer();
    return response.status;
  });
}

/** Poll until every instance answers `model` with `status`. */
async function untilEveryInstance(instances: TestGateway[], key: string, model: string, status: number): Promise<void> {
  await Promise.all(
    instances.map((instance, index) =>
      eventually(() => chat(instance, key, model), { what: `instance ${index} answering ${model} with ${status}`, until: (seen) => seen === status }),
    ),
  );
}

async function newKey(instance: TestGateway, agent: string): Promise<string> {
  return (await createKey(instance.gateway.store, agent, "roomy", "free")).key;
}

async function sharedDocument(prefix: string): Promise<{ document: RawConfig; version: string | null }> {
  const client = redis.client();
  const [text, version] = await client.mget(`${prefix}config`, `${prefix}config:v`);
  if (typeof text !== "string") throw new Error(`no ${prefix}config in Redis`);
  return { document: JSON.parse(text) as RawConfig, version: version ?? null };
}

function configFile(home: string): string {
  return readFileSync(homePaths(home).config, "utf8");
}

test.serial(
  "the first instance seeds Redis from its file; a second instance with a different file runs the shared config and keeps its own server section",
  async (t) => {
    const prefix = "seed:";
    const first = await sharedHome(prefix, "a/", "https://first.example.test");
    const other = await sharedHome(prefix, "b/", "https://other.example.test");
    const otherFile = configFile(other);
    const a = await start(first);

    const { document } = await sharedDocument(prefix);
    t.deepEqual(
      document.routes.map((route: RawConfig) => route.prefix),
      ["a/"],
    );
    t.is(document.providers.up.apiKey, `\${${KEY_VARIABLE}}`, "env references are stored as written");
    t.false("server" in document, "each instance's server section stays in its own file");
    t.false("state" in document, "how to reach Redis stays in each instance's own file");

    const b = await start(other);
    const key = await newKey(a, "seeded");
    t.is(await chat(b, key, "a/cheap"), 200, "the second instance serves the shared routes");
    t.is(await chat(b, key, "b/cheap"), 404, "not the routes of its own file");
    t.is(await chat(a, key, "a/cheap"), 200);
    const sent = upstream.requests.filter((request) => request.path.endsWith("/chat/completions")).at(-1);
    t.is(sent?.headers.authorization, "Bearer sk-from-the-environment", "each instance interpolates the shared document's references");
    t.is(a.gateway.config.server.publicUrl, "https://first.example.test");
    t.is(b.gateway.config.server.publicUrl, "https://other.example.test");
    t.is(configFile(other), otherFile, "the second instance's file is left as it was");
  },
);

test.serial("providers, routes and plans changed with gw through one home reach every instance; the home's file is left alone", async (t) => {
  const prefix = "cli:";
  const first = await sharedHome(prefix, "a/", "https://first.example.test");
  const other = await sharedHome(prefix, "b/", "https://other.example.test");
  const instances = [await start(first), await start(other)];
  const key = await newKey(instances[0]!, "provisioned");
  const files = [configFile(first), configFile(other)];

  const added = await gw(["providers", "add", "second", "--type", "openai", "--base-url", second.url, "--api-key", "sk-second"], { home: other });
  t.is(added.code, 0, added.stderr);
  const routed = await gw(["routes", "add", "c/", "--provider", "second", "--priority", "5"], { home: other });
  t.is(routed.code, 0, routed.stderr);
  await untilEveryInstance(instances, key, "c/cheap", 200);
  t.true(
    second.requests.some((request) => request.path.endsWith("/chat/completions") && request.headers.authorization === "Bearer sk-second"),
    "the new route goes to the new provider",
  );

  const planned = await gw(["plans", "set", "roomy", "--monthly-credits", "4321"], { home: first });
  t.is(planned.code, 0, planned.stderr);
  await Promise.all(
    instances.map((instance, index) =>
      eventually(
        async () => {
          const response = await fetch(`${instance.v1}/key`, { headers: { authorization: `Bearer ${key}` } });
          return ((await response.json()) as { data: { plan_credits: { limit: number } } }).data.plan_credits.limit;
        },
        { what: `instance ${index} reading the new plan limit`, until: (limit) => limit === 4321 },
      ),
    ),
  );

  // Two homes editing at once: neither change is lost (optimistic transactions, retried on conflict).
  const together = await Promise.all([
    gw(["routes", "add", "x1/", "--provider", "up"], { home: first }),
    gw(["routes", "add", "x2/", "--provider", "second"], { home: other }),
  ]);
  for (const result of together) t.is(result.code, 0, result.stderr);
  await untilEveryInstance(instances, key, "x1/cheap", 200);
  await untilEveryInstance(instances, key, "x2/cheap", 200);

  const listed = await gw(["routes", "list", "--json"], { home: first });
  t.is(listed.code, 0, listed.stderr);
  t.true(
    (JSON.parse(listed.stdout) as RawConfig[]).some((route) => route.prefix === "c/"),
    "gw routes list reads the shared config",
  );
  t.deepEqual([configFile(first), configFile(other)], files, "the homes' files keep only what they had");
  t.deepEqual(
    instances.map((instance) => instance.gateway.config.server.publicUrl),
    ["https://first.example.test", "https://other.example.test"],
    "a change keeps each instance's own server section",
  );
  t.false("server" in (await sharedDocument(prefix)).document);
});

test.serial("an invalid gw edit is refused naming the field, and nothing changes anywhere", async (t) => {
  const prefix = "invalid:";
  const home = await sharedHome(prefix, "a/", "https://first.example.test");
  const instance = await start(home);
  const key = await newKey(instance, "refused");
  const before = await sharedDocument(prefix);
  const file = configFile(home);

  const refused = await gw(["routes", "add", "z/", "--provider", "nowhere"], { home });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /routes\[1\]\.provider/);
  t.regex(refused.stderr, /unknown provider "nowhere"/);
  const badUrl = await gw(["providers", "set", "up", "--base-url", "not a url"], { home });
  t.is(badUrl.code, 1);
  t.regex(badUrl.stderr, /providers\.up\.baseUrl/);

  t.deepEqual(await sharedDocument(prefix), before, "the shared document and its version are unchanged");
  t.is(configFile(home), file);
  t.is(await chat(instance, key, "a/cheap"), 200);
  t.is(await chat(instance, key, "z/cheap"), 404);
});

test.serial(
  "a shared document changed behind gw's back: a valid one is followed without an announcement, an invalid one keeps the previous config and stops a new instance from starting",
  async (t) => {
    const prefix = "direct:";
    const home = await sharedHome(prefix, "a/", "https://first.example.test");
    const instance = await start(home);
    const key = await newKey(instance, "direct");
    const client = redis.client();
    const { document } = await sharedDocument(prefix);

    // Written and versioned but never published: the version poll finds it.
    document.routes.push({ prefix: "d/", provider: "up", priority: 1 });
    await client.multi().set(`${prefix}config`, JSON.stringify(document)).incr(`${prefix}config:v`).exec();
    await untilEveryInstance([instance], key, "d/cheap", 200);

    document.routes.push({ prefix: "e/", provider: "ghost" });
    await client.multi().set(`${prefix}config`, JSON.stringify(document)).incr(`${prefix}config:v`).publish(`${prefix}config:changes`, "0").exec();
    const refusal = await eventually(
      () => quietLogger.lines.find((line) => line.includes("config change refused") && line.includes(`${prefix}config`)),
      "the refusal logged",
    );
    t.regex(refusal ?? "", /routes\[2\]\.provider: unknown provider "ghost"/);
    t.is(await chat(instance, key, "d/cheap"), 200, "the previous config stays in force");
    t.is(await chat(instance, key, "e/cheap"), 404);

    const late = await sharedHome(prefix, "a/", "https://late.example.test");
    const error = await t.throwsAsync(startTestGateway(late, {}));
    t.regex(error?.message ?? "", /routes\[2\]\.provider: unknown provider "ghost"/);
  },
);
