// `gw doctor` on a home whose state is in Redis (issue 23), against a real redis-server and an S3
// bucket (s3rver): it names the drivers (never a password), checks that Redis answers and is set up
// as gw needs (eviction, persistence, memory), that the bucket answers, reads agents, keys and
// usage from Redis instead of the home's unused files, and prints the same balances line as an
// embedded home with the same history. A hung Redis fails the check instead of hanging the doctor.
// `gw backup` and `gw restore` refuse a Redis home, saying what replaces them, and write nothing.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import net from "node:net";
import path from "node:path";
import test from "ava";
import { readBootstrap } from "../src/config/bootstrap-sections.js";
import { stateSchema } from "../src/config/config-schema.js";
import { homePaths } from "../src/config/paths.js";
import { openState } from "../src/store/open-state.js";
import { createKey } from "../src/store/provisioning.js";
import { RedisConfigStore } from "../src/store/redis-config-store.js";
import { periodOf, type UsageRow } from "../src/store/usage-log.js";
import { gw, json, makeHome, type RawConfig } from "./helpers/gateway-harness.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { startS3, type TestS3 } from "./helpers/s3-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

interface Check {
  name: string;
  status: "ok" | "warn" | "error";
  detail: string;
  balances?: { agents: number; period: string; periodCredits: number; lifetimeCredits: number };
}
interface Report {
  ok: boolean;
  checks: Check[];
}

const BUCKET = "gw-doctor";
const SIGNING_SECRET = "doctor-test-signing-secret-0123456789abcdef";
const REDIS_PASSWORD = "redis-password-never-printed";

let bucket: TestS3;
let s3Endpoint: string;
const servers: TestRedis[] = [];

test.before(async () => {
  bucket = await startS3([BUCKET]);
  s3Endpoint = bucket.endpoint;
});

test.after.always(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await bucket?.close();
});

/** A redis-server of the case's own, set up as gw needs (append-only file on) unless the case changes it. */
async function redisServer(): Promise<TestRedis> {
  const server = await startRedis();
  servers.push(server);
  await server.client().config("SET", "appendonly", "yes");
  return server;
}

function s3Storage(endpoint = s3Endpoint): RawConfig {
  return {
    driver: "s3",
    options: { endpoint, bucket: BUCKET, region: "us-east-1", accessKeyId: "S3RVER", secretAccessKey: "${GW_TEST_S3_SECRET}", prefix: "blobs" },
    signingSecret: SIGNING_SECRET,
  };
}

/** A home whose state is on `url` (prefix "dr:") and whose files are in the bucket (or where `storage` says). */
function redisHome(url: string, storage: RawConfig = s3Storage()): Promise<string> {
  return makeHome((config) => {
    config.state = { driver: "redis", url, prefix: "dr:" };
    config.storage = storage;
  });
}

/** `gw doctor --json` with the bucket's secret in the environment, as the config reads it. */
async function doctor(home: string): Promise<{ code: number; stdout: string; stderr: string; report: Report; check: (name: string) => Check }> {
  const result = await gw(["doctor", "--json"], { home, env: { GW_TEST_S3_SECRET: "S3RVER" } });
  const report = json<Report>(result);
  const check = (name: string) => {
    const found = report.checks.find((entry) => entry.name === name);
    if (!found) throw new Error(`no ${name} check in ${result.stdout}`);
    return found;
  };
  return { ...result, report, check };
}

const STATE_CHECKS = ["drivers", "redis", "redis eviction", "redis persistence", "redis memory", "blobs", "metadata", "usage", "balances"];

test("a healthy Redis + S3 home: every state check ok, the drivers named without the password, agents read from Redis", async (t) => {
  const redis = await redisServer();
  await redis.client().config("SET", "requirepass", REDIS_PASSWORD);
  const url = `${redis.socket}?password=${REDIS_PASSWORD}`;
  const home = await redisHome(url);
  const state = await openState(stateSchema.parse({ driver: "redis", url, prefix: "dr:" }), homePaths(home), { warn() {}, info() {} });
  try {
    await createKey(state.metadata, "alice", "pro", "free");
    await createKey(state.metadata, "bob", "pro", "free");
  } finally {
    await state.close();
  }

  const result = await doctor(home);
  t.is(result.code, 0, result.stdout);
  for (const name of STATE_CHECKS) t.is(result.check(name).status, "ok", `${name}: ${result.check(name).detail}`);
  t.regex(
    result.check("drivers").detail,
    new RegExp(`^state=redis \\(${escapeRegExp(redis.socket)}, prefix dr:\\), blobs=s3 \\(bucket ${BUCKET} at 127\\.0\\.0\\.1:\\d+\\)$`),
  );
  t.regex(result.check("redis").detail, /^redis 7\.\d+\.\d+ answers/);
  t.regex(result.check("redis persistence").detail, /appendonly yes, appendfsync everysec/);
  t.regex(result.check("metadata").detail, /2 agents, 2 keys \(2 active\)/);
  t.regex(result.check("metadata").detail, /Redis/);
  t.false(
    result.report.checks.some((check) => check.name === "usage log"),
    "the home's unused usage log is not reported",
  );
  t.like(result.check("balances").balances, { agents: 2, periodCredits: 0, lifetimeCredits: 0 });
  t.false(result.stdout.includes(REDIS_PASSWORD), "the Redis password is never printed");
  t.false(result.stdout.includes("S3RVER"), "the bucket's keys are never printed");

  const plain = await gw(["doctor"], { home, env: { GW_TEST_S3_SECRET: "S3RVER" } });
  t.is(plain.code, 0, plain.stdout);
  t.regex(plain.stdout, /^ok +drivers +state=redis/m);
  t.false(plain.stdout.includes(REDIS_PASSWORD));
});

test("a URL's password is masked in the drivers line, and the failure names the URL without it", async (t) => {
  // Nothing listens here: the check fails, and both lines still hide the password.
  const port = await closedPort();
  const home = await redisHome(`redis://gw:${REDIS_PASSWORD}@127.0.0.1:${port}/2`);
  const result = await doctor(home);
  t.is(result.code, 1);
  t.regex(result.check("drivers").detail, new RegExp(`^state=redis \\(redis://gw:\\*\\*\\*@127\\.0\\.0\\.1:${port}/2, prefix dr:\\)`));
  t.is(result.check("redis").status, "error");
  t.regex(result.check("redis").detail, new RegExp(`127\\.0\\.0\\.1:${port}.*ECONNREFUSED`));
  t.false(result.stdout.includes(REDIS_PASSWORD));
});

test("a password in the Redis URL's query is never printed, by the doctor or by a command that cannot reach Redis", async (t) => {
  const port = await closedPort();
  const home = await redisHome(`redis://127.0.0.1:${port}/0?password=${REDIS_PASSWORD}`);
  const [doctored, created] = await Promise.all([doctor(home), gw(["keys", "create", "--agent", "alice"], { home })]);
  t.is(doctored.check("redis").status, "error");
  t.regex(doctored.check("drivers").detail, new RegExp(`state=redis \\(redis://127\\.0\\.0\\.1:${port}/0, prefix dr:\\)`));
  t.false(doctored.stdout.includes(REDIS_PASSWORD));
  t.is(created.code, 1);
  t.regex(created.stderr, /cannot be reached/);
  t.false(created.stderr.includes(REDIS_PASSWORD), created.stderr);
});

test("maxmemory-policy allkeys-lru fails the doctor, saying what eviction loses and how to fix it", async (t) => {
  const redis = await redisServer();
  await redis.client().config("SET", "maxmemory-policy", "allkeys-lru");
  const result = await doctor(await redisHome(redis.socket));
  t.is(result.code, 1);
  t.false(result.report.ok);
  const check = result.check("redis eviction");
  t.is(check.status, "error");
  t.regex(check.detail, /allkeys-lru/);
  t.regex(check.detail, /CONFIG SET maxmemory-policy noeviction/);
  t.regex(check.detail, /redis\.conf/);
  t.is(result.check("redis").status, "ok");
});

test("no persistence at all fails the doctor; snapshots only warn; appendfsync no warns", async (t) => {
  const redis = await redisServer();
  const client = redis.client();
  const home = await redisHome(redis.socket);
  await client.config("SET", "appendonly", "no");
  await client.config("SET", "save", "");
  const none = await doctor(home);
  t.is(none.code, 1);
  t.is(none.check("redis persistence").status, "error");
  t.regex(none.check("redis persistence").detail, /appendonly yes/);

  await client.config("SET", "save", "3600 1");
  const snapshots = await doctor(home);
  t.is(snapshots.code, 0, snapshots.stdout);
  t.is(snapshots.check("redis persistence").status, "warn");
  t.regex(snapshots.check("redis persistence").detail, /since the last snapshot/);

  await client.config("SET", "appendonly", "yes");
  await client.config("SET", "appendfsync", "no");
  const lazy = await doctor(home);
  t.is(lazy.check("redis persistence").status, "warn");
  t.regex(lazy.check("redis persistence").detail, /appendfsync no/);
});

test("memory used above 80% of maxmemory warns", async (t) => {
  const redis = await redisServer();
  const client = redis.client();
  const used = Number(/used_memory:(\d+)/.exec(await client.info("memory"))?.[1]);
  await client.config("SET", "maxmemory", String(Math.ceil(used * 1.1)));
  const result = await doctor(await redisHome(redis.socket));
  t.is(result.code, 0, result.stdout);
  t.is(result.check("redis memory").status, "warn");
  t.regex(result.check("redis memory").detail, /maxmemory/);
});

test("a Redis that refuses CONFIG (as managed ones do): the policy and memory come from INFO, persistence is a warning that it could not be read", async (t) => {
  const redis = await redisServer();
  // A user without CONFIG, as a managed Redis that renames it away answers.
  await redis.client().acl("SETUSER", "doctor", "on", ">doctor-password", "~*", "&*", "+@all", "-config");
  const result = await doctor(await redisHome(`${redis.socket}?username=doctor&password=doctor-password`));
  t.is(result.code, 0, result.stdout);
  t.is(result.check("redis eviction").status, "ok");
  t.regex(result.check("redis eviction").detail, /noeviction/);
  t.is(result.check("redis persistence").status, "warn");
  t.regex(result.check("redis persistence").detail, /^could not read the persistence settings .*the append-only file is on/);
  t.is(result.check("redis memory").status, "ok");
  t.false(result.stdout.includes("doctor-password"));
});

test("usage rows waiting in the home's outbox for Redis are a warning naming the file", async (t) => {
  const redis = await redisServer();
  const home = await redisHome(redis.socket);
  const outbox = path.join(homePaths(home).dataDir, "usage-outbox.jsonl");
  const row = usageRow("waiting-row", new Date().toISOString(), "agt_x", "gw_x", 5);
  writeFileSync(outbox, `${JSON.stringify({ hold: null, row })}\n`);
  const result = await doctor(home);
  t.is(result.code, 0, result.stdout);
  t.is(result.check("usage").status, "warn");
  t.true(result.check("usage").detail.includes(`1 rows wait in ${outbox}`), result.check("usage").detail);
});

test("a hung Redis fails the doctor within its command timeout instead of hanging it", async (t) => {
  const redis = await redisServer();
  const home = await redisHome(redis.socket);
  redis.pause();
  try {
    const result = await doctor(home);
    t.is(result.code, 1);
    const check = result.check("redis");
    t.is(check.status, "error");
    t.true(check.detail.includes(redis.socket), check.detail);
    for (const name of ["metadata", "usage", "balances"]) t.is(result.check(name).status, "error", name);
  } finally {
    redis.resume();
  }
});

test("a bucket that does not answer fails the blobs check; so does one the shared config names and the store lacks", async (t) => {
  const redis = await redisServer();
  const down = await doctor(await redisHome(redis.socket, s3Storage(`http://127.0.0.1:${await closedPort()}`)));
  t.is(down.code, 1);
  t.is(down.check("blobs").status, "error");
  t.regex(down.check("blobs").detail, /could not be reached/);
  t.is(down.check("redis").status, "ok");

  // The config every instance runs is Redis's (only server and state stay in the file): the doctor checks that one.
  const home = await redisHome(redis.socket);
  const shared = await RedisConfigStore.connect(readBootstrap(homePaths(home).config));
  try {
    await shared.edit((raw) => {
      (raw.storage as { options: { bucket: string } }).options.bucket = "gw-not-there";
    });
  } finally {
    await shared.close();
  }
  const missing = await doctor(home);
  t.is(missing.code, 1);
  t.is(missing.check("blobs").status, "error");
  t.regex(missing.check("blobs").detail, /gw-not-there.*NoSuchBucket/);
});

test("the balances line is the same on an embedded home and on a Redis home with the same usage", async (t) => {
  const redis = await redisServer();
  const embeddedHome = await makeHome();
  const redisUrl = redis.socket;
  const sharedBlobs = tempDir("gw-doctor-blobs-");
  const redisHomeDir = await redisHome(redisUrl, { driver: "fs", options: { base: sharedBlobs }, signingSecret: SIGNING_SECRET });
  const now = new Date();
  const thisMonth = periodOf(now);
  const lastMonth = periodOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)));
  const history: Array<{ agent: string; month: string; credits: number }> = [
    { agent: "alice", month: lastMonth, credits: 700 },
    { agent: "alice", month: thisMonth, credits: 120 },
    { agent: "bob", month: thisMonth, credits: 35 },
    { agent: "bob", month: lastMonth, credits: 9 },
    { agent: "bob", month: thisMonth, credits: 1 },
  ];
  const homes = [
    { home: embeddedHome, settings: stateSchema.parse({}) },
    { home: redisHomeDir, settings: stateSchema.parse({ driver: "redis", url: redisUrl, prefix: "dr:" }) },
  ];
  // The same history through each driver's own credit store (what the ledger settles through).
  for (const { home, settings } of homes) {
    const state = await openState(settings, homePaths(home), { warn() {}, info() {} });
    try {
      const ids = new Map<string, { id: string; prefix: string }>();
      for (const agent of ["alice", "bob", "carol"]) {
        const created = await createKey(state.metadata, agent, "pro", "free");
        ids.set(agent, { id: created.record.agentId, prefix: created.record.prefix });
      }
      for (const [index, entry] of history.entries()) {
        const agent = ids.get(entry.agent)!;
        await state.credits.settle(null, usageRow(`row-${index}`, `${entry.month}-15T12:00:00.000Z`, agent.id, agent.prefix, entry.credits));
      }
    } finally {
      await state.close();
    }
  }

  const [embedded, shared] = await Promise.all([doctor(embeddedHome), doctor(redisHomeDir)]);
  const expected = {
    agents: 3,
    period: thisMonth,
    periodCredits: history.filter((entry) => entry.month === thisMonth).reduce((sum, entry) => sum + entry.credits, 0),
    lifetimeCredits: history.reduce((sum, entry) => sum + entry.credits, 0),
  };
  t.deepEqual(embedded.check("balances").balances, expected);
  t.deepEqual(shared.check("balances").balances, expected);
  t.is(embedded.check("balances").detail, `3 agents, 156 credits used in ${thisMonth}, 865 lifetime`);
  t.is(shared.check("balances").detail, embedded.check("balances").detail);
  t.is(embedded.check("drivers").detail, `state=embedded, blobs=fs (${homePaths(embeddedHome).blobsDir})`);
  t.is(shared.check("drivers").detail, `state=redis (${redisUrl}, prefix dr:), blobs=fs (${sharedBlobs})`);
  t.is(shared.check("blobs").status, "ok");
  t.regex(shared.check("usage").detail, new RegExp(`3 rows in ${thisMonth}`));
  t.is(shared.code, 0, shared.stdout);
  t.is(embedded.code, 0, embedded.stdout);
});

test("gw backup and gw restore refuse a Redis home, say what replaces them, and write nothing", async (t) => {
  const redis = await redisServer();
  const home = await redisHome(redis.socket);
  const before = snapshotOf(home);
  const work = tempDir("gw-doctor-backup-");
  const output = path.join(work, "redis-home.tar.gz");

  const backup = await gw(["backup", "-o", output], { home });
  t.is(backup.code, 1);
  t.regex(backup.stderr, /state\.driver "redis"/);
  t.regex(backup.stderr, /appendonly/);
  t.regex(backup.stderr, /versioning/);
  t.regex(backup.stderr, /config\.json/);
  t.regex(backup.stderr, /usage-outbox\.jsonl/);
  t.regex(backup.stderr, /nothing was written/);
  t.deepEqual(readdirSync(work), [], "no archive, no temp file");
  t.deepEqual(snapshotOf(home), before, "no staging folder left in the home");

  // A real archive of an embedded home: the refusal is the target's, not the archive's.
  const archive = path.join(work, "embedded.tar.gz");
  const taken = await gw(["backup", "-o", archive], { home: await makeHome() });
  t.is(taken.code, 0, taken.stderr);
  const restore = await gw(["restore", archive, "--home", home, "--force"]);
  t.is(restore.code, 1);
  t.regex(restore.stderr, /state\.driver "redis"/);
  t.regex(restore.stderr, /new home/);
  t.regex(restore.stderr, /nothing was written/);
  t.deepEqual(snapshotOf(home), before, "the home's files are untouched and nothing was set aside");
});

/** Every path under the home with its content's hash. */
function snapshotOf(home: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const entry of readdirSync(home, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    entries[path.relative(home, full)] = entry.isFile() ? createHash("sha256").update(readFileSync(full)).digest("hex") : "dir";
  }
  return entries;
}

function usageRow(id: string, time: string, agent: string, keyPrefix: string, credits: number): UsageRow {
  return { id, time, agent, keyPrefix, endpoint: "chat", model: "m/x", provider: "up", units: { input_tokens: 1 }, credits, requestId: id };
}

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
