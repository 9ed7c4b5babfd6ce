// `gw usage` and `gw keys list` on a home whose state is in Redis (issue 23): the same chat calls
// made through a gateway on an embedded home and through two instances sharing a real
// redis-server give the same reports, read from this home's usage log on one side and from the
// Redis streams (`<prefix>usage:<YYYY-MM>`) on the other, with a row of last month in both. The
// history port itself is compared on both sides (pages, ranges cutting a month, invalid rows),
// and a Redis that cannot be reached is a clear error, never a hang.
import { mkdirSync, writeFileSync } from "node:fs";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { visiblePrefix } from "../src/store/api-keys.js";
import { RedisCreditStore } from "../src/store/redis-credit-store.js";
import { RedisUsageHistory } from "../src/store/redis-usage-history.js";
import { usageLogFile } from "../src/store/usage-files.js";
import { EmbeddedUsageHistory, type UsageHistory } from "../src/store/usage-history.js";
import { periodOf, type UsageRow } from "../src/store/usage-log.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { gw, json, makeHome, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

const SIGNING_SECRET = "usage-reports-share-this-link-signing-secret-0123";
const PREFIX = "rep:";

let redis: TestRedis;
let openai: FakeOpenAI;
let embedded: TestGateway;
let instances: TestGateway[] = [];
/** The home `gw` commands run on for the Redis side: its config.json says `state.driver: "redis"`. */
let operator: string;

function configure(config: RawConfig): void {
  config.storage = { signingSecret: SIGNING_SECRET, options: { base: tempDir("gw-usage-redis-blobs-") } };
  config.upstream = { retries: 0, retryBaseDelayMs: 1, breakerFailureThreshold: 0 };
  config.providers = { up: { type: "openai", baseUrl: openai.url, apiKey: "sk-up" } };
  config.routes = [{ prefix: "m/", provider: "up", priority: 1 }];
  config.models = [
    { id: "m/cheap", name: "Cheap", context_length: 200_000, max_output_tokens: 5000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } },
    { id: "m/dear", name: "Dear", context_length: 200_000, max_output_tokens: 5000, pricing: { input_per_mtok: 3, output_per_mtok: 7 } },
  ];
  config.plans = { roomy: { monthlyCredits: 10_000_000, freeTierOnly: false, requestsPerMinute: 6000 } };
}

function redisHome(): Promise<string> {
  return makeHome((config) => {
    configure(config);
    config.state = { driver: "redis", url: redis.socket, prefix: PREFIX };
  });
}

/** The same keys on a home: alice's with a lifetime budget (its spend counts last month), bob's plain, and carol's never used. */
async function createKeys(home: string): Promise<Record<string, string>> {
  const keys: Record<string, string> = {};
  const specs: Array<[string, string[]]> = [
    ["alice", ["--name", "laptop", "--budget", "5000000", "--budget-period", "total"]],
    ["bob", []],
    ["carol", ["--name", "idle"]],
  ];
  for (const [agent, flags] of specs) {
    const created = await gw(["keys", "create", "--agent", agent, "--plan", "roomy", ...flags, "--json"], { home });
    if (created.code !== 0) throw new Error(`gw keys create on ${home}: ${created.stderr}`);
    keys[agent] = json<{ key: string }>(created).key;
  }
  return keys;
}

async function agentIds(home: string): Promise<Record<string, string>> {
  const listed = json<Array<{ name: string; id: string }>>(await gw(["agents", "list", "--json"], { home }));
  return Object.fromEntries(listed.map((agent) => [agent.name, agent.id]));
}

/** Day 10 of the month before now, at noon UTC. */
function lastMonthNoon(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 10, 12));
}

function earlierRow(agentId: string, keyPrefix: string): UsageRow {
  return {
    id: `use_earlier_${agentId}`,
    time: lastMonthNoon().toISOString(),
    agent: agentId,
    keyPrefix,
    endpoint: "chat.completions",
    model: "m/dear",
    provider: "up",
    units: { input_tokens: 1000, output_tokens: 100 },
    credits: 3700,
    requestId: "req_earlier",
  };
}

async function chat(gateway: TestGateway, key: string, model: string): Promise<void> {
  const response = await fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });
  if (response.status !== 200) throw new Error(`chat ${model}: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
}

/** The calls of the month: alice 3 cheap and 2 dear, bob 1 cheap and 2 dear. */
const CALLS: Array<[agent: string, model: string]> = [
  ["alice", "m/cheap"],
  ["bob", "m/dear"],
  ["alice", "m/dear"],
  ["alice", "m/cheap"],
  ["bob", "m/cheap"],
  ["alice", "m/dear"],
  ["bob", "m/dear"],
  ["alice", "m/cheap"],
];

test.before(async () => {
  redis = await startRedis();
  openai = await startFakeOpenAI();
  openai.set({ usage: { prompt_tokens: 11, completion_tokens: 17 } });

  const embeddedHome = await makeHome(configure);
  const embeddedKeys = await createKeys(embeddedHome);
  operator = await redisHome();
  const redisKeys = await createKeys(operator);

  // Last month: one row for alice on each side, written where each side's gateway writes it.
  const embeddedIds = await agentIds(embeddedHome);
  const usageDir = homePaths(embeddedHome).usageDir;
  mkdirSync(usageDir, { recursive: true });
  const embeddedEarlier = earlierRow(embeddedIds.alice!, visiblePrefix(embeddedKeys.alice!));
  writeFileSync(usageLogFile(usageDir, periodOf(lastMonthNoon())), `${JSON.stringify(embeddedEarlier)}\n`);
  const redisIds = await agentIds(operator);
  const credits = new RedisCreditStore(redis.client(), { prefix: PREFIX });
  await credits.settle(null, earlierRow(redisIds.alice!, visiblePrefix(redisKeys.alice!)));
  credits.close();

  embedded = await startTestGateway(embeddedHome);
  const state = { driver: "redis" as const, url: redis.socket, prefix: PREFIX };
  for (let index = 0; index < 2; index += 1) instances.push(await startTestGateway(await redisHome(), { state }));

  // The same calls on both sides; on Redis, spread over the two instances.
  for (const [index, [agent, model]] of CALLS.entries()) {
    await chat(embedded, embeddedKeys[agent]!, model);
    await chat(instances[index % 2]!, redisKeys[agent]!, model);
  }
});

test.after.always(async () => {
  await Promise.all([embedded, ...instances].map((gateway) => gateway?.shutdown()));
  instances = [];
  await openai?.close();
  await redis?.stop();
});

async function report(home: string, args: string[]): Promise<string> {
  const result = await gw(args, { home });
  if (result.code !== 0) throw new Error(`gw ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

/** Both homes' output of one command. */
async function bothSides(args: string[]): Promise<{ embedded: string; redis: string }> {
  const [embeddedOut, redisOut] = await Promise.all([report(embedded.home, args), report(operator, args)]);
  return { embedded: embeddedOut, redis: redisOut };
}

interface RowsReport {
  period: string;
  agents: Array<{ agent: string; plan: string; used: number; balance: number }>;
  rows: UsageRow[];
}

test("gw usage --json lists the month's rows of both instances, with the same agents' totals as the embedded home", async (t) => {
  const out = await bothSides(["usage", "--json"]);
  const [embeddedReport, redisReport] = [JSON.parse(out.embedded) as RowsReport, JSON.parse(out.redis) as RowsReport];
  t.is(redisReport.rows.length, CALLS.length, "every call's row, whichever instance served it");
  t.is(embeddedReport.rows.length, CALLS.length);
  t.is(redisReport.period, embeddedReport.period);
  t.deepEqual(redisReport.agents, embeddedReport.agents);
  t.true(redisReport.agents.find((agent) => agent.agent === "alice")!.used > 0);
  const summary = (rows: UsageRow[]) => rows.map((row) => [row.endpoint, row.model, row.provider, row.credits, row.units]);
  t.deepEqual(summary(redisReport.rows), summary(embeddedReport.rows), "the same rows, in the order they were written");
});

test("gw usage --by agent, --by model over a range reaching last month, and --period of last month agree", async (t) => {
  const byAgent = await bothSides(["usage", "--by", "agent", "--json"]);
  t.deepEqual(JSON.parse(byAgent.redis), JSON.parse(byAgent.embedded));
  t.is((JSON.parse(byAgent.redis) as { total: { rows: number } }).total.rows, CALLS.length);

  const since = lastMonthNoon().toISOString().slice(0, 10);
  const byModel = await bothSides(["usage", "--by", "model", "--since", since, "--json"]);
  const models = JSON.parse(byModel.redis) as { groups: Array<{ model: string; rows: number }>; total: { rows: number; credits: number } };
  t.deepEqual(models, JSON.parse(byModel.embedded));
  t.is(models.total.rows, CALLS.length + 1, "last month's row is in the range");
  t.deepEqual(
    models.groups.map((group) => [group.model, group.rows]),
    [
      ["m/dear", 5],
      ["m/cheap", 4],
    ],
  );

  const lastMonth = await bothSides(["usage", "--period", periodOf(lastMonthNoon()), "--json"]);
  const earlier = JSON.parse(lastMonth.redis) as RowsReport;
  t.deepEqual(
    earlier.rows.map((row) => [row.model, row.credits, row.time]),
    [["m/dear", 3700, lastMonthNoon().toISOString()]],
  );
  t.deepEqual(earlier.agents, (JSON.parse(lastMonth.embedded) as RowsReport).agents);
});

test("the CSV, the chart and the table of the month read the same on both homes", async (t) => {
  for (const args of [
    ["usage", "--by", "endpoint", "--format", "csv"],
    ["usage", "--by", "day", "--chart"],
    ["usage", "--by", "agent"],
  ]) {
    const out = await bothSides(args);
    t.is(out.redis, out.embedded, args.join(" "));
  }
  const byDay = await bothSides(["usage", "--by", "day", "--format", "csv"]);
  t.is(byDay.redis, byDay.embedded);
  t.regex(byDay.redis, /^day,rows,credits,overage\n/);
});

test("gw keys list shows each key's spend (a lifetime budget's reaching last month) and last use as on the embedded home", async (t) => {
  interface Listed {
    name: string | null;
    agent: string;
    plan: string;
    budget: unknown;
    spent: number;
    lastUsedAt: string | null;
  }
  const out = await bothSides(["keys", "list", "--json"]);
  const view = (text: string) =>
    (JSON.parse(text) as Listed[])
      .map((key) => ({ name: key.name, agent: key.agent, plan: key.plan, budget: key.budget, spent: key.spent, used: key.lastUsedAt !== null }))
      .sort((a, b) => a.agent.localeCompare(b.agent));
  const redisKeys = view(out.redis);
  t.deepEqual(redisKeys, view(out.embedded));
  const alice = redisKeys.find((key) => key.agent === "alice")!;
  const month = (JSON.parse((await bothSides(["usage", "--by", "agent", "--json"])).redis) as { groups: Array<{ agent: string; credits: number }> }).groups;
  t.is(alice.spent, month.find((group) => group.agent === "alice")!.credits + 3700, "this month and last month's row");
  t.deepEqual(
    redisKeys.map((key) => [key.agent, key.used]),
    [
      ["alice", true],
      ["bob", true],
      ["carol", false],
    ],
  );
  const lastUse = (JSON.parse(out.redis) as Listed[]).find((key) => key.agent === "bob")!.lastUsedAt!;
  t.true(lastUse.startsWith(periodOf(new Date())), lastUse);
});

test("gw usage and gw keys list against a Redis that cannot be reached fail naming it, password hidden", async (t) => {
  const home = await makeHome((config) => {
    configure(config);
    // Port 1: nothing listens, the connection is refused at once.
    config.state = { driver: "redis", url: "redis://:hunter2-secret@127.0.0.1:1/0", prefix: PREFIX };
  });
  for (const args of [["usage"], ["usage", "--by", "model", "--json"], ["keys", "list"]]) {
    const result = await gw(args, { home });
    t.is(result.code, 1, args.join(" "));
    t.regex(result.stderr, /Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/0 cannot be reached/);
    t.notRegex(result.stderr, /hunter2/);
    t.is(result.stdout, "");
  }
});

// --- the history port on both sides ------------------------------------------------------------

function row(sequence: number, time: string, credits: unknown = 10 + sequence): UsageRow {
  return {
    id: `use_port_${sequence}`,
    time,
    agent: "agent_port",
    keyPrefix: "gw_portkey",
    endpoint: "chat.completions",
    model: "m/cheap",
    provider: "up",
    units: { input_tokens: sequence },
    credits,
    requestId: `req_${sequence}`,
    // Every third row carries request tags (docs/decisions.md §24): they come back as written.
    ...(sequence % 3 === 0 ? { tags: ["team:port", `job:${sequence}`] } : {}),
  } as UsageRow;
}

async function readAll(history: UsageHistory, range: { since: number; until: number }): Promise<{ rows: UsageRow[]; skipped: string[] }> {
  const reading = await history.reading(range);
  const rows: UsageRow[] = [];
  const skipped: string[] = [];
  for await (const batch of reading.rows((warning) => skipped.push(warning))) rows.push(...batch);
  // A second pass over the same reading sees the same rows.
  const again: UsageRow[] = [];
  for await (const batch of reading.rows()) again.push(...batch);
  if (JSON.stringify(again) !== JSON.stringify(rows)) throw new Error("a second pass read other rows");
  return { rows, skipped };
}

test("the Redis history reads its streams in pages, as the embedded history reads its files: same rows, ranges, skipped rows and periods", async (t) => {
  const rows: UsageRow[] = [];
  for (let index = 0; index < 25; index += 1) rows.push(row(index, `2025-03-${String(1 + index).padStart(2, "0")}T10:00:00.000Z`));
  rows.push(row(90, "2025-04-02T00:00:00.000Z"), row(91, "2024-12-31T23:59:59.999Z"));
  const invalid = row(92, "2025-03-15T00:00:00.000Z", -5);

  const directory = tempDir("gw-usage-history-");
  const lines = new Map<string, string>();
  for (const each of [...rows, invalid]) {
    const period = each.time.slice(0, 7);
    lines.set(period, `${lines.get(period) ?? ""}${JSON.stringify(each)}\n`);
  }
  for (const [period, text] of lines) writeFileSync(usageLogFile(directory, period), text);

  const client = redis.client();
  const prefix = "port:";
  const credits = new RedisCreditStore(client, { prefix });
  for (const each of rows) await credits.settle(null, each);
  credits.close();
  // An invalid row the settle script would refuse, written as the script writes a row.
  await client.xadd(`${prefix}usage:2025-03`, "*", "r", JSON.stringify(invalid));
  const onRedis = new RedisUsageHistory(client, prefix, { pageSize: 4 });
  const onFiles = new EmbeddedUsageHistory(directory);

  t.deepEqual(await onRedis.periods(), ["2024-12", "2025-03", "2025-04"]);
  t.deepEqual(await onRedis.periods(), await onFiles.periods());
  const byTime = (a: UsageRow, b: UsageRow) => a.time.localeCompare(b.time);
  for (const range of [
    { since: Date.UTC(2025, 2, 1), until: Date.UTC(2025, 3, 1) },
    { since: Date.UTC(2025, 2, 10), until: Date.UTC(2025, 2, 20) },
    { since: 0, until: Number.MAX_SAFE_INTEGER },
    { since: Date.UTC(2030, 0, 1), until: Date.UTC(2030, 1, 1) },
  ]) {
    const [fromRedis, fromFiles] = [await readAll(onRedis, range), await readAll(onFiles, range)];
    t.deepEqual(fromRedis.rows, fromFiles.rows, JSON.stringify(range));
    t.deepEqual(fromRedis.rows, rows.filter((each) => Date.parse(each.time) >= range.since && Date.parse(each.time) < range.until).sort(byTime));
    t.is(fromRedis.skipped.length, fromFiles.skipped.length);
  }
  const march = await readAll(onRedis, { since: Date.UTC(2025, 2, 1), until: Date.UTC(2025, 3, 1) });
  t.is(march.skipped.length, 1);
  t.regex(march.skipped[0]!, /^usage stream port:usage:2025-03 entry \d+-\d+: credits -5 is not a whole number/);

  // A reading is fixed when it begins: rows written after it are not in it.
  const reading = await onRedis.reading({ since: Date.UTC(2025, 2, 1), until: Date.UTC(2025, 3, 1) });
  const late = new RedisCreditStore(client, { prefix });
  await late.settle(null, row(93, "2025-03-28T00:00:00.000Z"));
  late.close();
  let count = 0;
  for await (const batch of reading.rows()) count += batch.length;
  t.is(count, 25);
});
