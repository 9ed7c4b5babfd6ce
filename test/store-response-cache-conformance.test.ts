// The response cache's two stores through one conformance suite (test/state/response-cache.conformance.ts):
// the embedded one (a folder of entry files in a temp dir, the index in memory) and the Redis one
// against a real redis-server, where two stores on one Redis stand for two gw instances. Then what
// only one of them has: the embedded cache's files (persistence across a restart, crash leftovers,
// a file removed behind its index), and Redis's sharing (the bound held across instances, nothing
// left behind by a clear).
import { mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { LocalResponseCache } from "../src/store/local-response-cache.js";
import { RedisResponseCache } from "../src/store/redis-response-cache.js";
import { eventually } from "./helpers/eventually.js";
import { redisForTests } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";
import { bytes, hashOf, newAgentId, responseCacheConformance } from "./state/response-cache.conformance.js";

const redis = redisForTests(test);
const HOUR_MS = 3_600_000;
const ROOMY = 1024 * 1024;

responseCacheConformance(test, "local", async () => {
  const cache = await LocalResponseCache.open(path.join(tempDir("gw-cache-"), "cache"));
  return { cache, twin: cache, close: () => cache.close() };
});

responseCacheConformance(test, "redis", async () => {
  const prefix = redis.prefix();
  return { cache: new RedisResponseCache(redis.client(), prefix), twin: new RedisResponseCache(redis.client(), prefix), close: () => undefined };
});

/** The names in a folder, sorted; none when it is missing. */
function namesIn(directory: string): string[] {
  try {
    return readdirSync(directory).sort();
  } catch {
    return [];
  }
}

test("local: a reopened cache finds its entries, their sizes and the bound's order", async (t) => {
  const directory = path.join(tempDir("gw-cache-"), "cache");
  const [alice, bob] = [newAgentId(), newAgentId()];
  const first = await LocalResponseCache.open(directory);
  await first.put(alice, hashOf("older"), bytes(100), HOUR_MS, ROOMY);
  await first.put(alice, hashOf("newer"), bytes(100, 3), HOUR_MS, ROOMY);
  await first.put(bob, hashOf("bob's"), bytes(40), HOUR_MS, ROOMY);
  await first.close();
  t.deepEqual(namesIn(directory), [alice, bob].sort());
  t.deepEqual(namesIn(path.join(directory, alice)), [hashOf("older"), hashOf("newer")].sort());
  // The order of use is the files' times: "older" was used an hour before "newer", bob's a day before both.
  const now = Date.now() / 1000;
  utimesSync(path.join(directory, alice, hashOf("older")), now - 3600, now - 3600);
  utimesSync(path.join(directory, bob, hashOf("bob's")), now - 86_400, now - 86_400);

  const reopened = await LocalResponseCache.open(directory);
  t.teardown(() => reopened.close());
  t.deepEqual(await reopened.totals(), { entries: 3, bytes: 240 });
  t.deepEqual(await reopened.totals(alice), { entries: 2, bytes: 200 });
  // At a bound of 250, a 100-byte put pushes out bob's (least recently used), then "older".
  await reopened.put(bob, hashOf("new"), bytes(100), HOUR_MS, 250);
  t.is(await reopened.get(bob, hashOf("bob's")), undefined);
  t.is(await reopened.get(alice, hashOf("older")), undefined);
  t.deepEqual(await reopened.get(alice, hashOf("newer")), bytes(100, 3));
  t.deepEqual(namesIn(path.join(directory, alice)), [hashOf("newer")]);
  t.deepEqual(namesIn(path.join(directory, bob)), [hashOf("new")]);
});

test("local: a hit makes its file the most recently used for the next start", async (t) => {
  const directory = path.join(tempDir("gw-cache-"), "cache");
  const agent = newAgentId();
  const first = await LocalResponseCache.open(directory);
  await first.put(agent, hashOf("read later"), bytes(100), HOUR_MS, ROOMY);
  await first.put(agent, hashOf("never read"), bytes(100), HOUR_MS, ROOMY);
  // Both written a minute ago; then the first is read.
  const minuteAgo = Date.now() / 1000 - 60;
  for (const name of ["read later", "never read"]) utimesSync(path.join(directory, agent, hashOf(name)), minuteAgo, minuteAgo);
  t.deepEqual(await first.get(agent, hashOf("read later")), bytes(100));
  await first.close();
  const reopened = await LocalResponseCache.open(directory);
  t.teardown(() => reopened.close());
  await reopened.put(agent, hashOf("third"), bytes(100), HOUR_MS, 200);
  t.is(await reopened.get(agent, hashOf("never read")), undefined);
  t.deepEqual(await reopened.get(agent, hashOf("read later")), bytes(100));
});

test("local: opening deletes lapsed entries, unreadable ones and abandoned temp files, and keeps a write in progress", async (t) => {
  const directory = path.join(tempDir("gw-cache-"), "cache");
  const agent = newAgentId();
  const first = await LocalResponseCache.open(directory);
  await first.put(agent, hashOf("lasting"), bytes(30), HOUR_MS, ROOMY);
  await first.put(agent, hashOf("lapsing"), bytes(20), 1, ROOMY);
  const lapsesAt = Date.now() + 1;
  await first.close();
  const folder = path.join(directory, agent);
  // A crash left a temp file an hour ago; another process is writing one now; a file too short for its header.
  const abandoned = `${hashOf("crashed")}.4242.0a1b2c3d4e5f.tmp`;
  const inProgress = `${hashOf("writing")}.4343.0a1b2c3d4e5f.tmp`;
  writeFileSync(path.join(folder, abandoned), "half");
  const hourAgo = Date.now() / 1000 - 3600;
  utimesSync(path.join(folder, abandoned), hourAgo, hourAgo);
  writeFileSync(path.join(folder, inProgress), "half");
  writeFileSync(path.join(folder, hashOf("truncated")), Buffer.from([1, 2, 3]));
  await eventually(() => Date.now() > lapsesAt + 1, "the brief entry's lifetime to pass");

  const reopened = await LocalResponseCache.open(directory);
  t.teardown(() => reopened.close());
  t.deepEqual(namesIn(folder), [hashOf("lasting"), inProgress].sort());
  t.deepEqual(await reopened.totals(), { entries: 1, bytes: 30 });
  t.deepEqual(await reopened.get(agent, hashOf("lasting")), bytes(30));
});

test("local: an entry file removed behind the index (gw cache clear elsewhere) is a miss, and leaves the totals", async (t) => {
  const directory = path.join(tempDir("gw-cache-"), "cache");
  const agent = newAgentId();
  const cache = await LocalResponseCache.open(directory);
  t.teardown(() => cache.close());
  await cache.put(agent, hashOf("gone"), bytes(64), HOUR_MS, ROOMY);
  await cache.put(agent, hashOf("kept"), bytes(16), HOUR_MS, ROOMY);
  rmSync(path.join(directory, agent, hashOf("gone")));
  t.is(await cache.get(agent, hashOf("gone")), undefined);
  t.deepEqual(await cache.totals(), { entries: 1, bytes: 16 });
  // A clear of the whole folder by another process: the next put makes the folder again.
  rmSync(directory, { recursive: true });
  t.is(await cache.get(agent, hashOf("kept")), undefined);
  await cache.put(agent, hashOf("gone"), bytes(8), HOUR_MS, ROOMY);
  t.deepEqual(await cache.get(agent, hashOf("gone")), bytes(8));
});

test("local: entries are files of their agent's folder, readable by the owner only; a clear removes them and nothing else", async (t) => {
  const directory = path.join(tempDir("gw-cache-"), "cache");
  const agent = newAgentId();
  const cache = await LocalResponseCache.open(directory);
  t.teardown(() => cache.close());
  await cache.put(agent, hashOf("private"), bytes(10), HOUR_MS, ROOMY);
  const file = path.join(directory, agent, hashOf("private"));
  t.is(statSync(file).mode & 0o777, 0o600);
  const inProgress = `${hashOf("writing")}.4343.0a1b2c3d4e5f.tmp`;
  writeFileSync(path.join(directory, agent, inProgress), "half");
  mkdirSync(path.join(directory, "not-an-agent.d"));
  t.deepEqual(await cache.clear(), { entries: 1, bytes: 10 });
  t.deepEqual(namesIn(path.join(directory, agent)), [inProgress]);
  t.deepEqual(namesIn(directory), [agent, "not-an-agent.d"].sort());
});

test("redis: two instances share the entries, and the bound holds over both", async (t) => {
  const prefix = redis.prefix();
  const one = new RedisResponseCache(redis.client(), prefix);
  const two = new RedisResponseCache(redis.client(), prefix);
  const [alice, bob] = [newAgentId(), newAgentId()];
  await one.put(alice, hashOf("x"), bytes(100), HOUR_MS, 250);
  t.deepEqual(await two.get(alice, hashOf("x")), bytes(100));
  await two.put(bob, hashOf("y"), bytes(100), HOUR_MS, 250);
  t.deepEqual(await one.get(bob, hashOf("y")), bytes(100)); // y is now the most recently used
  await one.put(alice, hashOf("z"), bytes(100), HOUR_MS, 250);
  t.is(await two.get(alice, hashOf("x")), undefined);
  t.deepEqual(await two.totals(), { entries: 2, bytes: 200 });
  t.deepEqual(await one.totals(bob), { entries: 1, bytes: 100 });
});

test("redis: a clear leaves no entry, size or set behind, and lapsed entries are swept from the bookkeeping", async (t) => {
  const prefix = redis.prefix();
  const client = redis.client();
  const cache = new RedisResponseCache(client, prefix);
  const [alice, bob] = [newAgentId(), newAgentId()];
  for (let index = 0; index < 1200; index += 1) await cache.put(index % 2 ? alice : bob, hashOf(`many ${index}`), bytes(3), HOUR_MS, ROOMY);
  await cache.put(alice, hashOf("brief"), bytes(5), 1, ROOMY);
  await eventually(() => client.pttl(`${prefix}cache:entry:${alice}/${hashOf("brief")}`), { what: "the brief value to expire", until: (ttl) => ttl === -2 });
  t.deepEqual(await cache.clear(alice), { entries: 600, bytes: 1800 });
  t.deepEqual(await cache.totals(), { entries: 600, bytes: 1800 });
  t.deepEqual(await client.keys(`${prefix}cache:agent:${alice}`), []);
  t.deepEqual(await cache.clear(), { entries: 600, bytes: 1800 });
  // Only the use counter is left: every entry, its bookkeeping and the totals are gone.
  t.deepEqual(await client.keys(`${prefix}*`), [`${prefix}cache:clock`]);

  await cache.put(bob, hashOf("lapsing"), bytes(7), 1, ROOMY);
  await cache.put(bob, hashOf("lasting"), bytes(9), HOUR_MS, ROOMY);
  await eventually(() => client.pttl(`${prefix}cache:entry:${bob}/${hashOf("lapsing")}`), { what: "the brief value to expire", until: (ttl) => ttl === -2 });
  t.deepEqual(await cache.totals(bob), { entries: 1, bytes: 9 });
  t.deepEqual(await client.zrange(`${prefix}cache:expires`, 0, -1), [`${bob}/${hashOf("lasting")}`]);
  t.deepEqual(await client.hgetall(`${prefix}cache:usage`), { "*": "9", [bob]: "9" });
});
