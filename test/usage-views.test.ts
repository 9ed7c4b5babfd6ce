// `gw usage` views of a known month, run as a user would (the built CLI): sums per day, model,
// agent, key and endpoint as a table, JSON and CSV; --since/--until at their edges; the bar chart
// at a fixed width, character for character; refused flag combinations; and a 300k-row log read
// streaming (under a heap too small to hold it).

import { once } from "node:events";
import { appendFileSync, createWriteStream, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { MetadataStore } from "../src/store/metadata-store.js";
import { createKey } from "../src/store/provisioning.js";
import type { UsageRow } from "../src/store/usage-log.js";
import type { GwResult } from "./_gw-cli.js";
import { gw, json, makeHome } from "./helpers/gateway-harness.js";

interface Fixture {
  home: string;
  aliceId: string;
  laptop: string;
  phone: string;
  bobKey: string;
}

let sequence = 0;
function row(time: string, agent: string, keyPrefix: string, endpoint: string, model: string, credits: unknown): UsageRow {
  sequence += 1;
  return {
    id: `use_${sequence}`,
    time,
    agent,
    keyPrefix,
    endpoint,
    model,
    provider: model.split("/")[0]!,
    units: { input_tokens: 10 },
    credits,
    requestId: `req_${sequence}`,
  } as UsageRow;
}

const lines = (rows: UsageRow[]) => rows.map((each) => `${JSON.stringify(each)}\n`).join("");

/**
 * March 2025: alice (pro) spends 45,000 credits in 4 rows on two keys, bob (free) 1,000 in 2 (one
 * row naming him by name, as older rows do), and one row is invalid. February and April hold one
 * row each, just outside the month.
 */
async function fixture(): Promise<Fixture> {
  const home = await makeHome();
  const store = await MetadataStore.open(homePaths(home).metadata);
  const laptopKey = await createKey(store, "alice", "pro", "free", { name: "laptop, home" });
  const phoneKey = await createKey(store, "alice", undefined, "free");
  const bobKey = await createKey(store, "bob", "free", "free");
  store.close();
  const aliceId = laptopKey.agent.id;
  const bobId = bobKey.agent.id;
  const [laptop, phone, bob] = [laptopKey.record.prefix, phoneKey.record.prefix, bobKey.record.prefix];
  const usageDir = homePaths(home).usageDir;
  mkdirSync(usageDir, { recursive: true });
  writeFileSync(path.join(usageDir, "2025-02.jsonl"), lines([row("2025-02-28T23:00:00.000Z", aliceId, laptop, "chat.completions", "openai/gpt-4o", 999)]));
  writeFileSync(
    path.join(usageDir, "2025-03.jsonl"),
    lines([
      row("2025-03-01T00:00:00.000Z", aliceId, laptop, "chat.completions", "openai/gpt-4o", 1500),
      row("2025-03-01T23:59:59.999Z", aliceId, phone, "image.generations", "openai/gpt-image-1", 40_000),
      row("2025-03-02T10:00:00.000Z", bobId, bob, "chat.completions", "anthropic/claude-sonnet", 700),
      row("2025-03-04T12:00:00.000Z", aliceId, laptop, "chat.completions", "openai/gpt-4o", 2500),
      row("2025-03-04T12:00:00.000Z", "bob", bob, "audio.speech", "openai/tts-1", 300),
      row("2025-03-05T08:00:00.000Z", aliceId, laptop, "chat.completions", "openai/gpt-4o", null),
      row("2025-03-31T23:59:59.000Z", aliceId, laptop, "chat.completions", "openai/gpt-4o", 1000),
    ]),
  );
  writeFileSync(path.join(usageDir, "2025-04.jsonl"), lines([row("2025-04-01T00:00:00.000Z", bobId, bob, "chat.completions", 'acme/"big",model', 5)]));
  return { home, aliceId, laptop, phone, bobKey: bob };
}

let shared: Promise<Fixture> | undefined;
const known = () => (shared ??= fixture());

async function usage(args: string[], env: Record<string, string | undefined> = {}): Promise<GwResult> {
  const { home } = await known();
  return gw(["usage", ...args], { home, env: { COLUMNS: undefined, ...env } });
}

function ok(t: { is: (actual: unknown, expected: unknown, message?: string) => void }, result: GwResult): void {
  t.is(result.code, 0, result.stderr);
}

interface GroupReport {
  period?: string;
  since: string;
  until: string;
  by: string;
  groups: Array<Record<string, string | number>>;
  total: { rows: number; credits: number };
  skipped?: number;
}

test("--by sums the month per day, model, agent, key and endpoint", async (t) => {
  const { laptop, phone, bobKey } = await known();
  const by = (dimension: string) => usage(["--period", "2025-03", "--by", dimension, "--json"]);
  const [day, model, agent, key, endpoint] = await Promise.all([by("day"), by("model"), by("agent"), by("key"), by("endpoint")]);
  for (const result of [day, model, agent, key, endpoint]) ok(t, result);

  const days = json<GroupReport>(day);
  t.is(days.groups.length, 31, "every day of the month, spent or not");
  t.deepEqual(days.groups[0], { day: "2025-03-01", rows: 2, credits: 41_500 });
  t.deepEqual(days.groups[2], { day: "2025-03-03", rows: 0, credits: 0 });
  t.deepEqual(days.groups[3], { day: "2025-03-04", rows: 2, credits: 2800 });
  t.deepEqual(days.groups[30], { day: "2025-03-31", rows: 1, credits: 1000 });
  t.deepEqual(days.total, { rows: 6, credits: 46_000 });
  t.is(days.skipped, 1);
  t.like(days, { period: "2025-03", since: "2025-03-01T00:00:00.000Z", until: "2025-04-01T00:00:00.000Z", by: "day" });

  t.deepEqual(json<GroupReport>(model).groups, [
    { model: "openai/gpt-image-1", rows: 1, credits: 40_000 },
    { model: "openai/gpt-4o", rows: 3, credits: 5000 },
    { model: "anthropic/claude-sonnet", rows: 1, credits: 700 },
    { model: "openai/tts-1", rows: 1, credits: 300 },
  ]);
  // A row naming bob by name counts for the same agent as the rows naming him by id.
  t.deepEqual(json<GroupReport>(agent).groups, [
    { agent: "alice", rows: 4, credits: 45_000 },
    { agent: "bob", rows: 2, credits: 1000 },
  ]);
  t.deepEqual(json<GroupReport>(key).groups, [
    { key: phone, agent: "alice", rows: 1, credits: 40_000 },
    { key: laptop, name: "laptop, home", agent: "alice", rows: 3, credits: 5000 },
    { key: bobKey, agent: "bob", rows: 2, credits: 1000 },
  ]);
  t.deepEqual(json<GroupReport>(endpoint).groups, [
    { endpoint: "image.generations", rows: 1, credits: 40_000 },
    { endpoint: "chat.completions", rows: 4, credits: 5700 },
    { endpoint: "audio.speech", rows: 1, credits: 300 },
  ]);
  for (const result of [model, agent, key, endpoint]) t.deepEqual(json<GroupReport>(result).total, { rows: 6, credits: 46_000 });
});

test("the table of a --by view, and --format json is --json", async (t) => {
  const [table, asFormat, asJson] = await Promise.all([
    usage(["--period", "2025-03", "--by", "endpoint"]),
    usage(["--period", "2025-03", "--by", "agent", "--format", "json"]),
    usage(["--period", "2025-03", "--by", "agent", "--json"]),
  ]);
  ok(t, table);
  t.is(
    table.stdout,
    [
      "period 2025-03",
      "ENDPOINT           ROWS  CREDITS",
      "image.generations  1     40,000",
      "chat.completions   4     5,700",
      "audio.speech       1     300",
      "total 46,000 credits ($0.046) in 6 rows",
      "1 invalid row skipped (not counted in these totals); the lines are listed on stderr",
      "",
    ].join("\n"),
  );
  t.regex(table.stderr, /2025-03\.jsonl line 6: credits null/);
  ok(t, asFormat);
  t.is(asFormat.stdout, asJson.stdout);
});

test("csv: a header, one line per group or row, fields quoted where they must be", async (t) => {
  const { laptop, phone, bobKey } = await known();
  const [keys, models, rows] = await Promise.all([
    usage(["--period", "2025-03", "--by", "key", "--format", "csv"]),
    usage(["--period", "2025-04", "--by", "model", "--format", "csv"]),
    usage(["--period", "2025-04", "--format", "csv"]),
  ]);
  for (const result of [keys, models, rows]) ok(t, result);
  // overage (credits not billed beyond what calls held) is always a column, 0 when there is none.
  t.is(keys.stdout, `key,name,agent,rows,credits,overage\n${phone},,alice,1,40000,0\n${laptop},"laptop, home",alice,3,5000,0\n${bobKey},,bob,2,1000,0\n`);
  t.is(models.stdout, 'model,rows,credits,overage\n"acme/""big"",model",1,5,0\n');
  t.is(
    rows.stdout,
    `time,agent,key,endpoint,model,provider,credits,request_id,overage,batch,cached,tags\n2025-04-01T00:00:00.000Z,bob,${bobKey},chat.completions,"acme/""big"",model",acme,5,req_9,0,,,\n`,
  );
});

test("--since is inclusive, --until excludes a time and includes a date's whole day, across months", async (t) => {
  const credits = async (args: string[]) => {
    const result = await usage([...args, "--by", "agent", "--json"]);
    ok(t, result);
    return json<GroupReport>(result);
  };
  const [edges, inside, offset, across, untilOnly] = await Promise.all([
    credits(["--since", "2025-03-01T23:59:59.999Z", "--until", "2025-03-04"]),
    credits(["--since", "2025-03-02", "--until", "2025-03-04T12:00:00Z"]),
    // A time with an offset: 13:00 at +01:00 is 12:00 UTC, so the two rows at 12:00 are in.
    credits(["--since", "2025-03-04T13:00:00+01:00", "--until", "2025-03-05"]),
    // Three files: the last hour of February, all of March, the first instant of April.
    credits(["--since", "2025-02-28", "--until", "2025-04-01"]),
    // --until alone starts at its month's beginning; the row at exactly 23:59:59 is out.
    credits(["--until", "2025-03-31T23:59:59Z"]),
  ]);
  t.deepEqual(edges.total, { rows: 4, credits: 43_500 });
  t.is(edges.until, "2025-03-05T00:00:00.000Z");
  t.is(edges.period, undefined);
  t.deepEqual(inside.total, { rows: 1, credits: 700 });
  t.deepEqual(offset.total, { rows: 2, credits: 2800 });
  t.deepEqual(across.total, { rows: 8, credits: 47_004 });
  t.deepEqual(across.groups, [
    { agent: "alice", rows: 5, credits: 45_999 },
    { agent: "bob", rows: 3, credits: 1005 },
  ]);
  t.deepEqual(untilOnly.total, { rows: 5, credits: 45_000 });
  t.is(untilOnly.since, "2025-03-01T00:00:00.000Z");
  // A whole month by dates is that month: balances come back.
  const month = await usage(["--since", "2025-03-01", "--until", "2025-03-31", "--json"]);
  ok(t, month);
  t.like(json(month), {
    period: "2025-03",
    agents: [
      { agent: "alice", plan: "pro", used: 45_000, balance: 20_000_000 - 45_000 },
      { agent: "bob", plan: "free", used: 1000, balance: 1_000_000 - 1000 },
    ],
  });
});

test("without --by: the agents' credits and the rows, as gw usage has always printed them", async (t) => {
  const { aliceId } = await known();
  const [asJson, table, every, alice, range] = await Promise.all([
    usage(["--period", "2025-03", "--json"]),
    usage(["--period", "2025-03"]),
    usage(["--period", "2025-03", "--rows"]),
    usage(["--period", "2025-03", "--agent", "alice", "--json"]),
    usage(["--since", "2025-03-02", "--until", "2025-03-03"]),
  ]);
  for (const result of [asJson, table, every, alice, range]) ok(t, result);
  const report = json<{ period: string; agents: unknown[]; rows: UsageRow[]; skipped: number }>(asJson);
  t.deepEqual(report.agents, [
    { agent: "alice", plan: "pro", used: 45_000, balance: 20_000_000 - 45_000 },
    { agent: "bob", plan: "free", used: 1000, balance: 1_000_000 - 1000 },
  ]);
  t.is(report.rows.length, 6);
  t.is(report.skipped, 1);
  t.deepEqual(
    json<{ rows: UsageRow[] }>(alice).rows.map((each) => [each.agent, each.credits]),
    [
      [aliceId, 1500],
      [aliceId, 40_000],
      [aliceId, 2500],
      [aliceId, 1000],
    ],
  );
  t.regex(table.stdout, /^period 2025-03\nAGENT\s+PLAN\s+USED\s+BALANCE\nalice\s+pro\s+45,000\s+19,955,000\nbob\s+free\s+1,000\s+999,000\n/);
  t.regex(table.stdout, /^2025-03-04T12:00:00\.000Z\s+bob\s+gw_\S+\s+audio\.speech\s+openai\/tts-1\s+openai\s+300\s+req_\d+$/m);
  t.is(table.stdout.split("\n").filter((line) => line.startsWith("2025-03-")).length, 6);
  t.is(every.stdout, table.stdout, "--rows streams the same table when the range holds few rows");
  // A range that is not a calendar month has no balance (a plan's credits are per month).
  t.false(range.stdout.includes("invalid"), "the invalid row of 03-05 lies outside the range");
  t.regex(
    range.stdout,
    /^since 2025-03-02T00:00:00\.000Z until 2025-03-04T00:00:00\.000Z \(UTC; until exclusive\)\nAGENT\s+PLAN\s+USED\nalice\s+pro\s+0\nbob\s+free\s+700\n/,
  );
});

test("--chart draws the credits per day at the terminal's width, without colour", async (t) => {
  const chart = await usage(["--period", "2025-03", "--chart"], { COLUMNS: "60" });
  ok(t, chart);
  const zero = (day: string) => `2025-03-${day}${" ".repeat(49)}0`;
  const quiet = ["05", "06", "07", "08", "09", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20"];
  const later = ["21", "22", "23", "24", "25", "26", "27", "28", "29", "30"];
  t.is(
    chart.stdout,
    [
      "credits per day, period 2025-03",
      "2025-03-01 ██████████████████████████████████████████ 41,500",
      "2025-03-02 █                                             700",
      zero("03"),
      "2025-03-04 ███                                         2,800",
      ...quiet.map(zero),
      ...later.map(zero),
      "2025-03-31 █                                           1,000",
      "total 46,000 credits ($0.046) in 6 rows",
      "1 invalid row skipped (not counted in these totals); the lines are listed on stderr",
      "",
    ].join("\n"),
  );
  for (const line of chart.stdout.split("\n").filter((each) => each.startsWith("2025-"))) t.is(line.length, 60, line);
  t.false(chart.stdout.includes("\u001b"), "no colour codes");

  // Per group, long labels cut to fit; without a terminal or $COLUMNS the chart is 80 wide.
  const [models, plain] = await Promise.all([
    usage(["--period", "2025-03", "--chart", "--by", "model"], { COLUMNS: "40" }),
    usage(["--period", "2025-03", "--chart"]),
  ]);
  ok(t, models);
  t.is(
    models.stdout,
    [
      "credits per model, period 2025-03",
      "openai/gpt-imag… ████████████████ 40,000",
      "openai/gpt-4o    ██                5,000",
      "anthropic/claud… █                   700",
      "openai/tts-1     █                   300",
      "total 46,000 credits ($0.046) in 6 rows",
      "1 invalid row skipped (not counted in these totals); the lines are listed on stderr",
      "",
    ].join("\n"),
  );
  ok(t, plain);
  t.is(plain.stdout.split("\n")[1]!.length, 80);
});

test("invalid flags and ranges are refused with a message that says why", async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [["--by", "week"], /--by.*day, model, agent, key, endpoint/],
    [["--format", "xml"], /--format.*table, json, csv/],
    [["--since", "2025-02-30"], /--since "2025-02-30" is not a calendar date/],
    [["--since", "last tuesday"], /--since "last tuesday": expected a date \(YYYY-MM-DD\) or an ISO 8601 time/],
    [["--until", "2025-03-01T25:00:00Z"], /--until "2025-03-01T25:00:00Z": expected/],
    [
      ["--since", "2025-03-10", "--until", "2025-03-09"],
      /--since 2025-03-10T00:00:00\.000Z is not before --until 2025-03-10T00:00:00\.000Z: the range is empty/,
    ],
    [["--period", "2025-03", "--since", "2025-03-01"], /--since|--period/],
    [["--period", "2025-13"], /--period "2025-13": expected YYYY-MM/],
    [["--chart", "--format", "csv"], /--chart draws for a terminal; it cannot be combined with --format csv/],
    [["--chart", "--json"], /--chart|--json/],
    [["--json", "--format", "csv"], /--json|--format/],
    [["--rows", "--by", "day"], /--rows|--by/],
    [["--rows", "--format", "csv"], /--rows lists rows in the table/],
    [["--agent", "nobody"], /no agent "nobody"/],
  ];
  const results = await Promise.all(cases.map(([args]) => usage(args)));
  results.forEach((result, index) => {
    const [args, message] = cases[index]!;
    t.not(result.code, 0, args.join(" "));
    t.regex(result.stderr, message, args.join(" "));
    t.is(result.stdout, "", args.join(" "));
  });
});

test("a 300,000-row month is read streaming: totals right, under a heap too small to hold the log", async (t) => {
  const home = await makeHome();
  const file = path.join(homePaths(home).usageDir, "2025-05.jsonl");
  mkdirSync(path.dirname(file), { recursive: true });
  const out = createWriteStream(file);
  const perDay = new Map<string, number>();
  let total = 0;
  const ROWS = 300_000;
  for (let start = 0; start < ROWS; start += 10_000) {
    let chunk = "";
    for (let index = start; index < start + 10_000; index += 1) {
      const day = `2025-05-${String(1 + (index % 31)).padStart(2, "0")}`;
      const credits = 1 + (index % 97);
      perDay.set(day, (perDay.get(day) ?? 0) + credits);
      total += credits;
      const time = `${day}T${String(index % 24).padStart(2, "0")}:00:00.000Z`;
      chunk += `${JSON.stringify({ id: `use_${index}`, time, agent: `agt_${index % 9}`, keyPrefix: `gw_k${index % 50}`, endpoint: "chat.completions", model: `m/model-${index % 7}`, provider: "m", units: { input_tokens: 10 }, credits, requestId: `req_${index}` })}\n`;
    }
    if (!out.write(chunk)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
  // The heap limit is far below the log (about 75 MB): reading it whole would fail.
  const env = { NODE_OPTIONS: "--max-old-space-size=48" };
  const [days, table] = await Promise.all([
    gw(["usage", "--period", "2025-05", "--by", "day", "--json"], { home, env }),
    gw(["usage", "--period", "2025-05"], { home, env }),
  ]);
  ok(t, days);
  const report = json<GroupReport>(days);
  t.deepEqual(report.total, { rows: ROWS, credits: total });
  t.deepEqual(
    report.groups.map((group) => [group.day, group.credits]),
    [...perDay.entries()],
  );
  ok(t, table);
  t.regex(table.stdout, /^the last 20 of 300,000 rows; --rows lists every one/m);
  t.is(table.stdout.split("\n").filter((line) => line.startsWith("2025-05-")).length, 20);
  appendFileSync(file, '{"torn": '); // an unacknowledged last write is not read
  const again = await gw(["usage", "--period", "2025-05", "--by", "model", "--json"], { home, env });
  ok(t, again);
  t.deepEqual(json<GroupReport>(again).total, { rows: ROWS, credits: total });
});
