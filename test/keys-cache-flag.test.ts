// A key's response-cache lifetime (`gw keys create|set --cache`, docs/decisions.md §10, §22): the
// CLI stores it on the key, `gw keys list` and GET /v1/key show it, bad values are refused before
// anything changes; on the embedded home and on a Redis one.
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { visiblePrefix } from "../src/store/api-keys.js";
import { MetadataStore } from "../src/store/metadata-store.js";
import type { KeyRecord, MetadataData } from "../src/store/records.js";
import { removeTempHomes } from "./_gw-cli.js";
import { eventually } from "./helpers/eventually.js";
import { gw, json, makeHome, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

interface ListedKey {
  prefix: string;
  cacheTtlSeconds: number | null;
}

let redis: TestRedis;
const running: TestGateway[] = [];

test.before(async () => {
  redis = await startRedis();
});

test.after.always(async () => {
  await Promise.all(running.map((gateway) => gateway.shutdown()));
  await redis?.stop();
  removeTempHomes();
});

function withPlan(config: RawConfig): void {
  config.plans = { roomy: { monthlyCredits: 1_000_000, freeTierOnly: false, requestsPerMinute: 6000 } };
}

async function start(home: string): Promise<TestGateway> {
  const gateway = await startTestGateway(home);
  running.push(gateway);
  return gateway;
}

async function storedKey(home: string, prefix: string): Promise<KeyRecord | undefined> {
  const store = await MetadataStore.open(homePaths(home).metadata);
  try {
    return store.data.keys.find((key) => key.prefix === prefix);
  } finally {
    store.close();
  }
}

async function listed(home: string, prefix: string): Promise<ListedKey | undefined> {
  const result = await gw(["keys", "list", "--json"], { home });
  if (result.code !== 0) throw new Error(`gw keys list: ${result.stderr}`);
  return json<ListedKey[]>(result).find((key) => key.prefix === prefix);
}

async function keyCacheTtl(gateway: TestGateway, key: string): Promise<unknown> {
  const response = await fetch(`${gateway.v1}/key`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await response.json()) as { data: Record<string, unknown> };
  if (response.status !== 200) throw new Error(`GET /v1/key answered ${response.status}: ${JSON.stringify(body)}`);
  return body.data.cache_ttl_seconds;
}

/** GET /v1/key once the running server has read the key's latest change. */
function untilKeyCacheTtl(gateway: TestGateway, key: string, expected: number | null): Promise<unknown> {
  return eventually(() => keyCacheTtl(gateway, key), { what: `GET /v1/key to say cache_ttl_seconds ${expected}`, until: (seen) => seen === expected });
}

async function createKey(home: string, flags: string[]): Promise<{ key: string; prefix: string; cacheTtlSeconds?: number | null }> {
  const created = await gw(["keys", "create", "--agent", "cached", "--plan", "roomy", ...flags, "--json"], { home });
  if (created.code !== 0) throw new Error(`gw keys create: ${created.stderr}`);
  const view = json<{ key: string; cacheTtlSeconds?: number | null }>(created);
  // The visible prefix, as gw keys list shows it (create --json names it only for a key made with limits).
  return { ...view, prefix: visiblePrefix(view.key) };
}

test.serial("keys create --cache 10m stores 600 s; list and GET /v1/key show it; set --cache 2h changes it and --cache off removes it", async (t) => {
  const home = await makeHome(withPlan);
  const gateway = await start(home);
  const made = await createKey(home, ["--cache", "10m"]);
  t.is(made.cacheTtlSeconds, 600, "create --json shows the lifetime in seconds");
  t.is((await storedKey(home, made.prefix))?.cacheTtlSeconds, 600);
  t.is((await listed(home, made.prefix))?.cacheTtlSeconds, 600);
  t.is(await untilKeyCacheTtl(gateway, made.key, 600), 600);

  const plain = await createKey(home, []);
  t.is((await listed(home, plain.prefix))?.cacheTtlSeconds, null);
  t.is(await keyCacheTtl(gateway, plain.key), null, "a key without a lifetime does not cache");

  const table = await gw(["keys", "list"], { home });
  t.is(table.code, 0, table.stderr);
  const lines = table.stdout.trim().split("\n");
  t.regex(lines[0]!, /^NAME\s+PREFIX\s+AGENT\s+PLAN\s+RPM\s+TPM\s+CACHE\s+MODELS\s/);
  t.regex(lines.find((line) => line.includes(made.prefix))!, /\sroomy\s+-\s+-\s+10m\s+-\s/, "the lifetime as people write it");
  t.regex(lines.find((line) => line.includes(plain.prefix))!, /\sroomy\s+-\s+-\s+-\s+-\s/);

  const changed = await gw(["keys", "set", made.prefix, "--cache", "2h", "--json"], { home });
  t.is(changed.code, 0, changed.stderr);
  t.is(json<KeyRecord>(changed).cacheTtlSeconds, 7200);
  t.is((await storedKey(home, made.prefix))?.cacheTtlSeconds, 7200);
  t.is(await untilKeyCacheTtl(gateway, made.key, 7200), 7200, "a running server sees the change");

  const seconds = await gw(["keys", "set", made.prefix, "--cache", "300"], { home });
  t.is(seconds.code, 0, seconds.stderr);
  t.is((await storedKey(home, made.prefix))?.cacheTtlSeconds, 300, "bare seconds");

  const off = await gw(["keys", "set", made.prefix, "--cache", "off"], { home });
  t.is(off.code, 0, off.stderr);
  const stored = await storedKey(home, made.prefix);
  t.truthy(stored);
  t.false(stored !== undefined && "cacheTtlSeconds" in stored, "off removes the field");
  t.is((await listed(home, made.prefix))?.cacheTtlSeconds, null);
  t.is(await untilKeyCacheTtl(gateway, made.key, null), null);

  t.is((await gw(["keys", "set", made.prefix, "--cache", "1d"], { home })).code, 0);
  t.is((await gw(["keys", "set", made.prefix, "--cache", "none"], { home })).code, 0);
  t.is((await storedKey(home, made.prefix))?.cacheTtlSeconds, undefined, "none removes it too");
});

test.serial("bad --cache values are refused with a clear message, and nothing is created or changed", async (t) => {
  const home = await makeHome(withPlan);
  const made = await createKey(home, ["--cache", "10m"]);
  const before = (await gw(["keys", "list", "--json"], { home })).stdout;
  const cases: Array<[string, RegExp]> = [
    ["0", /--cache "0": expected a lifetime of at least 1s \(90s, 15m, 12h, 7d, or seconds\), or off/],
    ["-5", /--cache "-5": expected a lifetime/],
    ["10x", /--cache "10x": expected a lifetime/],
    ["", /--cache "": expected a lifetime/],
    ["31d", /--cache "31d" is longer than the longest cache lifetime, 30d \(cache\.maxTtlSeconds\)/],
  ];
  for (const [value, message] of cases) {
    for (const command of [
      ["keys", "create", "--agent", "other", `--cache=${value}`],
      ["keys", "set", made.prefix, `--cache=${value}`],
    ]) {
      const result = await gw(command, { home });
      t.is(result.code, 2, command.join(" "));
      t.regex(result.stderr, message, command.join(" "));
      t.is(result.stdout, "", "no key printed");
    }
  }
  t.is((await gw(["keys", "list", "--json"], { home })).stdout, before, "no key created, none changed");
  t.is((await storedKey(home, made.prefix))?.cacheTtlSeconds, 600);
  t.is((await gw(["keys", "create", "--agent", "other", "--cache", "30d"], { home })).code, 0, "the maximum itself is accepted");
});

test.serial("on a Redis home: the lifetime is kept in the shared document, read by the servers, and bounded by the shared config's maximum", async (t) => {
  const prefix = "cache-keys:";
  const home = await makeHome((config) => {
    withPlan(config);
    config.state = { driver: "redis", url: redis.socket, prefix };
    // Several instances could share this state: files where all of them read, links signed with one secret.
    config.storage = {
      ...config.storage,
      signingSecret: "a-signing-secret-shared-by-every-instance-0123456789",
      options: { base: tempDir("gw-cache-keys-blobs-") },
    };
    config.cache = { maxTtlSeconds: 3600 };
  });
  // The first instance seeds the shared config (with its cache maximum) and the agents-and-keys document.
  const gateway = await start(home);
  const made = await createKey(home, ["--cache", "15m"]);
  t.is(made.cacheTtlSeconds, 900);
  const document = async () => JSON.parse((await redis.client().get(`${prefix}meta`)) ?? "null") as MetadataData;
  t.is((await document()).keys.find((key) => key.prefix === made.prefix)?.cacheTtlSeconds, 900);
  t.is((await listed(home, made.prefix))?.cacheTtlSeconds, 900);
  t.is(await untilKeyCacheTtl(gateway, made.key, 900), 900);

  const over = await gw(["keys", "set", made.prefix, "--cache", "2h"], { home });
  t.is(over.code, 2);
  t.regex(over.stderr, /--cache "2h" is longer than the longest cache lifetime, 1h \(cache\.maxTtlSeconds\)/);
  t.is((await document()).keys.find((key) => key.prefix === made.prefix)?.cacheTtlSeconds, 900, "nothing changed");

  t.is((await gw(["keys", "set", made.prefix, "--cache", "1h"], { home })).code, 0);
  t.is(await untilKeyCacheTtl(gateway, made.key, 3600), 3600);
  t.is((await gw(["keys", "set", made.prefix, "--cache", "off"], { home })).code, 0);
  t.is((await document()).keys.find((key) => key.prefix === made.prefix)?.cacheTtlSeconds, undefined);
  t.is(await untilKeyCacheTtl(gateway, made.key, null), null);
});
