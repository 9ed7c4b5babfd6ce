// `gw usage` over tagged rows (docs/decisions.md §24), run as a user would (the built CLI): --by
// tag counts a row in each of its tags' groups and once in the total, untagged rows in (none);
// --tag keeps the rows carrying any of the tags named; the CSV of rows ends with a tags column.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { MetadataStore } from "../src/store/metadata-store.js";
import { createKey } from "../src/store/provisioning.js";
import type { UsageRow } from "../src/store/usage-log.js";
import { gw, json, makeHome } from "./helpers/gateway-harness.js";

interface Fixture {
  home: string;
  prefix: string;
}

let sequence = 0;
function row(agent: string, keyPrefix: string, credits: number, tags?: unknown): UsageRow {
  sequence += 1;
  return {
    id: `use_${sequence}`,
    time: `2025-05-0${sequence}T10:00:00.000Z`,
    agent,
    keyPrefix,
    endpoint: "chat.completions",
    model: "openai/gpt-4o",
    provider: "openai",
    units: { prompt_tokens: 10, completion_tokens: 5 },
    credits,
    requestId: `req_${sequence}`,
    ...(tags === undefined ? {} : { tags }),
  } as UsageRow;
}

/** May 2025: four rows, one with two tags, one with one, one untagged, one whose tags field is not a list. */
async function fixture(): Promise<Fixture> {
  const home = await makeHome();
  const store = await MetadataStore.open(homePaths(home).metadata);
  const created = await createKey(store, "ada", "pro", "free");
  store.close();
  const agent = created.agent.id;
  const prefix = created.record.prefix;
  const usageDir = homePaths(home).usageDir;
  mkdirSync(usageDir, { recursive: true });
  const rows = [
    row(agent, prefix, 1000, ["customer:acme", "feature:search"]),
    row(agent, prefix, 300, ["customer:acme"]),
    row(agent, prefix, 50),
    row(agent, prefix, 7, "customer:acme"),
  ];
  writeFileSync(path.join(usageDir, "2025-05.jsonl"), rows.map((each) => `${JSON.stringify(each)}\n`).join(""));
  return { home, prefix };
}

let shared: Promise<Fixture> | undefined;
const known = () => (shared ??= fixture());
const usage = async (args: string[]) => gw(["usage", "--period", "2025-05", ...args], { home: (await known()).home });

test("--by tag: a row counts in each of its tags' groups and once in the total; untagged rows are (none)", async (t) => {
  const table = await usage(["--by", "tag"]);
  t.is(table.code, 0, table.stderr);
  const lines = table.stdout.split("\n");
  t.regex(lines.find((line) => line.startsWith("customer:acme")) ?? "", /^customer:acme\s+2\s+1,300$/);
  t.regex(lines.find((line) => line.startsWith("feature:search")) ?? "", /^feature:search\s+1\s+1,000$/);
  t.regex(lines.find((line) => line.startsWith("(none)")) ?? "", /^\(none\)\s+2\s+57$/, "no tags, and tags that are not a list");
  t.regex(table.stdout, /total 1,357 credits .* in 4 rows/);
  t.regex(table.stdout, /a row with several tags counts in each of its tags' groups, and once in the total/);

  const report = json<{ by: string; groups: Array<{ tag: string; rows: number; credits: number }>; total: { rows: number; credits: number } }>(
    await usage(["--by", "tag", "--json"]),
  );
  t.is(report.by, "tag");
  t.deepEqual(report.groups, [
    { tag: "customer:acme", rows: 2, credits: 1300 },
    { tag: "feature:search", rows: 1, credits: 1000 },
    { tag: "(none)", rows: 2, credits: 57 },
  ]);
  t.deepEqual(report.total, { rows: 4, credits: 1357 });
});

test("--tag keeps the rows carrying the tag; several --tag keep those carrying any", async (t) => {
  const acme = json<{ rows: UsageRow[]; agents: Array<{ used: number; balance?: number }> }>(await usage(["--tag", "customer:acme", "--json"]));
  t.deepEqual(
    acme.rows.map((each) => each.credits),
    [1000, 300],
  );
  t.is(acme.agents[0]?.used, 1300);
  t.is(acme.agents[0]?.balance, undefined, "no balance: the rows of some tags are not what the plan's credits went on");

  const any = json<{ rows: UsageRow[] }>(await usage(["--tag", "feature:search", "--tag", "customer:acme", "--json"]));
  t.is(any.rows.length, 2);

  const grouped = json<{ groups: Array<{ tag: string; rows: number }> }>(await usage(["--by", "tag", "--tag", "feature:search", "--json"]));
  t.deepEqual(
    grouped.groups.map((group) => [group.tag, group.rows]),
    [
      ["customer:acme", 1],
      ["feature:search", 1],
    ],
    "the kept row still counts in each of its tags",
  );

  const table = await usage(["--tag", "customer:acme"]);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /^period 2025-05, tag customer:acme$/m);

  const bad = await usage(["--tag", "not a tag"]);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /cannot be a tag/);
});

test("the CSV of rows ends with a tags column, space-separated", async (t) => {
  const { prefix } = await known();
  const csv = await usage(["--format", "csv"]);
  t.is(csv.code, 0, csv.stderr);
  const [header, ...rows] = csv.stdout.trimEnd().split("\n");
  t.is(header, "time,agent,key,endpoint,model,provider,credits,request_id,overage,batch,cached,tags");
  t.is(rows[0], `2025-05-01T10:00:00.000Z,ada,${prefix},chat.completions,openai/gpt-4o,openai,1000,req_1,0,,,customer:acme feature:search`);
  t.true(rows[2]!.endsWith(",50,req_3,0,,,"));
  t.true(rows[3]!.endsWith(",7,req_4,0,,,"), "a tags field that is not a list reads as none");

  const groups = await usage(["--by", "tag", "--format", "csv"]);
  t.is(groups.stdout, "tag,rows,credits,overage\ncustomer:acme,2,1300,0\nfeature:search,1,1000,0\n(none),2,57,0\n");
});
