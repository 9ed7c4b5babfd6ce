// `gw cache stats` and `gw cache clear`, run as a user would, on an embedded home (entry files in
// data/cache, read and removed whether or not `gw serve` runs) and on a home whose state is in a
// real redis-server (the entries every instance shares). Entries are seeded by opening the home's
// store directly, as a server would have written them.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { LocalResponseCache } from "../src/store/local-response-cache.js";
import { MetadataStore } from "../src/store/metadata-store.js";
import { createAgent } from "../src/store/provisioning.js";
import { RedisMetadataStore } from "../src/store/redis-metadata-store.js";
import { RedisResponseCache } from "../src/store/redis-response-cache.js";
import type { ResponseCacheStore } from "../src/store/response-cache.js";
import { editHomeConfig, gw, json, makeHome, spawnServe } from "./helpers/gateway-harness.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";
import { bytes, hashOf } from "./state/response-cache.conformance.js";

let redis: TestRedis;
test.before(async () => {
  redis = await startRedis();
});
test.after.always(async () => {
  await redis?.stop();
});
const HOUR_MS = 3_600_000;
const DEFAULT_BOUND = 256 * 1024 * 1024;

interface Stats {
  entries: number;
  bytes: number;
  maxBytes: number;
  agent?: { name: string; id: string; entries: number; bytes: number };
}

interface Cleared {
  removed: { entries: number; bytes: number };
  agent?: { name: string; id: string };
}

/** alice: two entries (1,500 and 2,500 bytes); bob: one (100 bytes). */
async function seed(cache: ResponseCacheStore, ids: { alice: string; bob: string }): Promise<void> {
  await cache.put(ids.alice, hashOf("alice 1"), bytes(1500), HOUR_MS, DEFAULT_BOUND);
  await cache.put(ids.alice, hashOf("alice 2"), bytes(2500), HOUR_MS, DEFAULT_BOUND);
  await cache.put(ids.bob, hashOf("bob 1"), bytes(100), HOUR_MS, DEFAULT_BOUND);
}

/** An embedded home with agents alice and bob, and their entries in its cache folder. */
async function embeddedHome(): Promise<{ home: string; ids: { alice: string; bob: string }; cacheDir: string }> {
  const home = await makeHome();
  const paths = homePaths(home);
  const store = await MetadataStore.open(paths.metadata);
  const ids = { alice: (await createAgent(store, "alice", "free")).id, bob: (await createAgent(store, "bob", "free")).id };
  store.close();
  const cacheDir = path.join(paths.dataDir, "cache");
  const cache = await LocalResponseCache.open(cacheDir);
  await seed(cache, ids);
  await cache.close();
  return { home, ids, cacheDir };
}

function entryFiles(cacheDir: string, agentId: string): string[] {
  const folder = path.join(cacheDir, agentId);
  return existsSync(folder) ? readdirSync(folder).sort() : [];
}

test("gw help lists the cache topic, and gw help cache its two commands", async (t) => {
  const [root, topic] = await Promise.all([gw(["help"]), gw(["help", "cache"])]);
  t.is(root.code, 0, root.stderr);
  t.regex(root.stdout, /^\s+cache\s+The response cache/m);
  t.is(topic.code, 0, topic.stderr);
  for (const command of ["stats", "clear"]) t.regex(topic.stdout, new RegExp(`cache ${command}\\b`), command);
});

test("gw cache stats on an empty home: no entries, and the default bound", async (t) => {
  const home = await makeHome();
  const result = await gw(["cache", "stats", "--json"], { home });
  t.is(result.code, 0, result.stderr);
  t.deepEqual(json<Stats>(result), { entries: 0, bytes: 0, maxBytes: DEFAULT_BOUND });
  const shown = await gw(["cache", "stats"], { home });
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, /^response cache: 0 entries, 0 B of 256 MB \(cache\.maxBytes\)$/m);
  t.regex(shown.stdout, /gw_cache_\* series of GET \/metrics/);
  t.false(existsSync(path.join(homePaths(home).dataDir, "cache")), "a report makes no folder");
});

test("gw cache stats counts every agent's entries, or one agent's, against the configured bound", async (t) => {
  const { home, ids } = await embeddedHome();
  editHomeConfig(home, (config) => {
    config.cache = { maxBytes: 64 * 1024 * 1024 };
  });
  const whole = await gw(["cache", "stats", "--json"], { home });
  t.is(whole.code, 0, whole.stderr);
  t.deepEqual(json<Stats>(whole), { entries: 3, bytes: 4100, maxBytes: 64 * 1024 * 1024 });
  const alice = await gw(["cache", "stats", "--agent", "alice", "--json"], { home });
  t.is(alice.code, 0, alice.stderr);
  t.deepEqual(json<Stats>(alice), { entries: 3, bytes: 4100, maxBytes: 64 * 1024 * 1024, agent: { name: "alice", id: ids.alice, entries: 2, bytes: 4000 } });
  const shown = await gw(["cache", "stats", "--agent", "bob"], { home });
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, /^agent bob: 1 entry, 100 B$/m);
  t.regex(shown.stdout, /^response cache: 3 entries, 4 KB of 64 MB \(cache\.maxBytes\)$/m);
});

test("gw cache clear --agent removes that agent's entry files only; gw cache clear the rest", async (t) => {
  const { home, ids, cacheDir } = await embeddedHome();
  const alice = await gw(["cache", "clear", "--agent", "alice", "--json"], { home });
  t.is(alice.code, 0, alice.stderr);
  t.deepEqual(json<Cleared>(alice), { removed: { entries: 2, bytes: 4000 }, agent: { name: "alice", id: ids.alice } });
  t.deepEqual(entryFiles(cacheDir, ids.alice), []);
  t.deepEqual(entryFiles(cacheDir, ids.bob), [hashOf("bob 1")]);
  const reopened = await LocalResponseCache.open(cacheDir);
  t.deepEqual(await reopened.get(ids.bob, hashOf("bob 1")), bytes(100));
  await reopened.close();

  const rest = await gw(["cache", "clear"], { home });
  t.is(rest.code, 0, rest.stderr);
  t.regex(rest.stdout, /^removed 1 entry, 100 B from the response cache$/m);
  t.deepEqual(entryFiles(cacheDir, ids.bob), []);
  t.deepEqual(json<Stats>(await gw(["cache", "stats", "--json"], { home })), { entries: 0, bytes: 0, maxBytes: DEFAULT_BOUND });
});

test("an agent the home does not have is an error, and nothing is removed", async (t) => {
  const { home, ids, cacheDir } = await embeddedHome();
  for (const command of ["stats", "clear"]) {
    const result = await gw(["cache", command, "--agent", "nobody", "--json"], { home });
    t.is(result.code, 1, command);
    t.is(result.stdout, "", command);
    t.regex(result.stderr, /no agent "nobody"/, command);
  }
  t.is(entryFiles(cacheDir, ids.alice).length, 2);
  t.is(entryFiles(cacheDir, ids.bob).length, 1);
});

test("gw cache stats and clear work while gw serve runs on the home", async (t) => {
  const { home, ids, cacheDir } = await embeddedHome();
  const server = await spawnServe(home);
  t.teardown(() => {
    if (server.child.exitCode === null) server.child.kill("SIGKILL");
  });
  const stats = await gw(["cache", "stats", "--agent", "alice", "--json"], { home });
  t.is(stats.code, 0, stats.stderr);
  t.like(json<Stats>(stats), { entries: 3, agent: { entries: 2, bytes: 4000 } });
  const cleared = await gw(["cache", "clear", "--json"], { home });
  t.is(cleared.code, 0, cleared.stderr);
  t.deepEqual(json<Cleared>(cleared).removed, { entries: 3, bytes: 4100 });
  t.deepEqual([...entryFiles(cacheDir, ids.alice), ...entryFiles(cacheDir, ids.bob)], []);
  server.child.kill("SIGTERM");
  t.is(await server.exited, 0, server.stderr());
});

test("on a home whose state is in Redis, gw cache stats and clear read and clear the shared entries", async (t) => {
  const prefix = "cli:";
  const client = redis.client();
  const home = await makeHome((config) => {
    config.storage = { signingSecret: "cache-commands-share-this-link-signing-secret-0", options: { base: tempDir("gw-cache-cli-blobs-") } };
    config.state = { driver: "redis", url: redis.socket, prefix };
  });
  const metadata = await RedisMetadataStore.open(client, client, { prefix, create: true });
  const ids = { alice: (await createAgent(metadata, "alice", "free")).id, bob: (await createAgent(metadata, "bob", "free")).id };
  metadata.close();
  const cache = new RedisResponseCache(client, prefix);
  await seed(cache, ids);

  const stats = await gw(["cache", "stats", "--agent", "alice", "--json"], { home });
  t.is(stats.code, 0, stats.stderr);
  t.deepEqual(json<Stats>(stats), { entries: 3, bytes: 4100, maxBytes: DEFAULT_BOUND, agent: { name: "alice", id: ids.alice, entries: 2, bytes: 4000 } });
  const alice = await gw(["cache", "clear", "--agent", "alice", "--json"], { home });
  t.is(alice.code, 0, alice.stderr);
  t.deepEqual(json<Cleared>(alice), { removed: { entries: 2, bytes: 4000 }, agent: { name: "alice", id: ids.alice } });
  t.is(await cache.get(ids.alice, hashOf("alice 1")), undefined);
  t.deepEqual(await cache.get(ids.bob, hashOf("bob 1")), bytes(100));
  const unknown = await gw(["cache", "clear", "--agent", "nobody"], { home });
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /no agent "nobody"/);
  const rest = await gw(["cache", "clear", "--json"], { home });
  t.deepEqual(json<Cleared>(rest), { removed: { entries: 1, bytes: 100 } });
  t.deepEqual(await cache.totals(), { entries: 0, bytes: 0 });
});

test("a Redis that cannot be reached is an error naming it, and nothing is removed", async (t) => {
  const gone = path.join(tempDir("gw-cache-cli-"), "no-redis.sock");
  const home = await makeHome((config) => {
    config.storage = { signingSecret: "cache-commands-share-this-link-signing-secret-0", options: { base: tempDir("gw-cache-cli-blobs-") } };
    config.state = { driver: "redis", url: gone, prefix: "x:", commandTimeoutMs: 300 };
  });
  const result = await gw(["cache", "clear"], { home });
  t.is(result.code, 1);
  t.is(result.stdout, "");
  t.true(result.stderr.includes(gone), result.stderr);
  t.regex(result.stderr, /cannot be reached.*nothing was removed/);
});
