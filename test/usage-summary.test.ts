// `gw usage` of a whole month from the log's checkpoint (the default table, the JSON's head,
// --by anything but tag, --agent): every report, stdout and stderr, is what reading the whole month prints,
// wherever the checkpoint falls (none, mid-month, at the end) and whatever the month holds
// (invalid rows, rows naming their agent by name, an agent the metadata no longer has, overage,
// tags, fewer than 20 rows after the checkpoint or of the agent asked for).

import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import test from "ava";
import { keyListing } from "../src/admin/key-listing.js";
import type { UsageDimension } from "../src/admin/usage-groups.js";
import { reportRange } from "../src/admin/usage-range.js";
import { printUsage, type ReportOutput, type UsageFormat } from "../src/admin/usage-report.js";
import { loadConfigFile } from "../src/config/load-config.js";
import { homePaths } from "../src/config/paths.js";
import { MetadataStore } from "../src/store/metadata-store.js";
import { createKey } from "../src/store/provisioning.js";
import type { MetadataData } from "../src/store/records.js";
import { checkpointFile } from "../src/store/usage-checkpoint.js";
import { EmbeddedUsageHistory } from "../src/store/usage-history.js";
import { UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { makeHome } from "./helpers/gateway-harness.js";

const PERIOD = "2025-03";
const lines = (rows: unknown[]) => rows.map((each) => `${JSON.stringify(each)}\n`).join("");

interface Fixture {
  home: string;
  usageDir: string;
  metadata: MetadataData;
  /** The month's lines: rows, and a few that are not valid rows. */
  month: unknown[];
}

/** March 2025: 600 rows over three agents (one named by name, one unknown), overage, tags, invalid rows here and there. */
async function fixture(): Promise<Fixture> {
  const home = await makeHome();
  const paths = homePaths(home);
  const store = await MetadataStore.open(paths.metadata);
  const alice = await createKey(store, "alice", "pro", "free");
  const bob = await createKey(store, "bob", "free", "free");
  const metadata = store.data;
  store.close();
  const month: unknown[] = [];
  for (let index = 0; index < 600; index += 1) {
    const day = String(1 + (index % 31)).padStart(2, "0");
    const agent = index % 50 === 7 ? "agt_gone" : index % 3 === 0 ? bob.agent.id : index % 7 === 0 ? "alice" : alice.agent.id;
    const row: Record<string, unknown> = {
      id: `use_${index}`,
      time: `${PERIOD}-${day}T${String(index % 24).padStart(2, "0")}:00:00.000Z`,
      agent,
      keyPrefix: agent === bob.agent.id ? bob.record.prefix : alice.record.prefix,
      endpoint: index % 4 === 0 ? "embeddings" : "chat.completions",
      model: index % 5 === 0 ? "anthropic/claude" : "openai/gpt-4o-mini",
      provider: "openai",
      units: { input_tokens: index },
      credits: index % 97 === 5 ? null : 10 + index,
      requestId: `req_${index}`,
    };
    if (index % 13 === 0) row.overage = 3;
    if (index % 11 === 0) row.tags = ["customer:acme"];
    // A key the metadata no longer has, fields that are not text, times that are not the gateway's.
    if (index % 17 === 3) row.keyPrefix = "gw_gonekey";
    if (index % 29 === 4) {
      delete row.model;
      row.keyPrefix = 42;
    }
    if (index % 41 === 9) row.time = "sometime";
    if (index % 43 === 10) row.time = `${PERIOD}-05T23:30:00-02:00`;
    month.push(row);
  }
  // A row whose bob is far from the end: `--agent bob` needs rows from before the checkpoint.
  month.push(...Array.from({ length: 30 }, (_, index) => ({ ...(month[1] as object), id: `tail_${index}`, agent: alice.agent.id, credits: 1 })));
  mkdirSync(paths.usageDir, { recursive: true });
  return { home, usageDir: paths.usageDir, metadata, month };
}

/** Everything a report writes, in order, stdout and stderr apart. */
function capture(): { out: ReportOutput; text: () => { stdout: string; stderr: string } } {
  let stdout = "";
  let stderr = "";
  return {
    out: {
      write: async (text) => {
        stdout += text;
      },
      line: (text = "") => {
        stdout += `${text}\n`;
      },
      table: (headers, rows, empty) => {
        stdout += `${JSON.stringify({ headers, rows, empty })}\n`;
      },
      chart: (bars) => bars.map((bar) => `${bar.label} ${bar.value}`),
      note: (text) => {
        stderr += `${text}\n`;
      },
    },
    text: () => ({ stdout, stderr }),
  };
}

interface Variant {
  chart?: boolean;
  format?: UsageFormat;
  by?: UsageDimension;
  agent?: string;
  tags?: string[];
  since?: string;
  until?: string;
}

const variants: Variant[] = [
  {},
  { format: "json" },
  { by: "agent" },
  { by: "agent", format: "json" },
  { by: "agent", format: "csv" },
  { agent: "bob" },
  { agent: "alice", format: "json" },
  { by: "agent", agent: "bob" },
  { tags: ["customer:acme"] },
  { format: "csv" },
  { by: "model" },
  { by: "model", format: "json" },
  { by: "day" },
  { by: "day", format: "csv" },
  { by: "key" },
  { by: "key", format: "json" },
  { by: "endpoint", format: "csv" },
  { by: "tag" },
  { by: "model", agent: "alice" },
  { by: "key", tags: ["customer:acme"] },
  { chart: true },
  // March whole inside a wider range, no other month's log: the same sums, no balances.
  { since: "2025-02-15", until: "2025-04-10" },
];

async function reports(fixture: Fixture): Promise<Array<{ variant: Variant; stdout: string; stderr: string }>> {
  const config = loadConfigFile(homePaths(fixture.home).config);
  const history = new EmbeddedUsageHistory(fixture.usageDir);
  const now = new Date("2025-04-02T00:00:00Z");
  const results = [];
  for (const variant of variants) {
    const { out, text } = capture();
    const range = reportRange(variant.since ? { since: variant.since, until: variant.until } : { period: PERIOD }, now);
    await printUsage(out, config, fixture.metadata, history, {
      range,
      format: variant.format ?? "table",
      chart: variant.chart ?? false,
      allRows: false,
      now,
      ...(variant.by ? { by: variant.by } : {}),
      ...(variant.agent ? { agent: variant.agent } : {}),
      ...(variant.tags ? { tags: variant.tags } : {}),
    });
    results.push({ variant, ...text() });
  }
  return results;
}

/** The month's first `count` lines written, checkpointed by the log's own close, then the rest appended as a server would. */
function checkpointAfter(fixture: Fixture, count: number): void {
  const file = `${fixture.usageDir}/${PERIOD}.jsonl`;
  rmSync(checkpointFile(fixture.usageDir, PERIOD), { force: true });
  rmSync(`${fixture.usageDir}-watermark.json`, { force: true });
  writeFileSync(file, lines(fixture.month.slice(0, count)));
  UsageLog.open(fixture.usageDir, new Date(`${PERIOD}-15T00:00:00Z`)).close();
  appendFileSync(file, lines(fixture.month.slice(count)));
}

test("every report of a whole month prints the same from the checkpoint as from the whole log", async (t) => {
  const month = await fixture();
  // Invalid rows the gateway would skip, and a blank line.
  month.month.splice(100, 0, { id: "bad", agent: "", credits: 5 }, { id: "worse", agent: "x", credits: "ten" });
  month.month.splice(590, 0, { id: "late-bad", agent: "y", credits: -1 });
  const file = `${month.usageDir}/${PERIOD}.jsonl`;
  writeFileSync(file, lines(month.month));
  t.false(existsSync(checkpointFile(month.usageDir, PERIOD)));
  const whole = await reports(month);
  t.regex(whole[0]!.stdout, /the last 20 of/);
  t.regex(whole[0]!.stderr, /line 101: agent "" is not a non-empty string/);

  for (const at of [0, 1, 150, 595, 620, month.month.length]) {
    checkpointAfter(month, at);
    t.true(existsSync(checkpointFile(month.usageDir, PERIOD)) || at === 0, `a checkpoint after ${at} lines`);
    const fromCheckpoint = await reports(month);
    for (const [index, result] of fromCheckpoint.entries()) {
      t.deepEqual(result, whole[index], `checkpoint after ${at} lines, ${JSON.stringify(result.variant)}`);
    }
  }
});

test("a report from the checkpoint still refuses a line that is not JSON, after it or just before its end", async (t) => {
  const month = await fixture();
  const file = `${month.usageDir}/${PERIOD}.jsonl`;
  const config = loadConfigFile(homePaths(month.home).config);
  const now = new Date("2025-04-02T00:00:00Z");
  const run = () =>
    printUsage(capture().out, config, month.metadata, new EmbeddedUsageHistory(month.usageDir), {
      range: reportRange({ period: PERIOD }, now),
      format: "table",
      chart: false,
      allRows: false,
      now,
    });
  checkpointAfter(month, 600);
  appendFileSync(file, "{broken\n");
  await t.throwsAsync(run, { message: /corrupt at line 631\b/ });

  // Line 599 damaged in place: the checkpoint no longer fits, and the month is read as before.
  checkpointAfter(month, 630);
  const text = readFileSync(file, "utf8").split("\n");
  text[598] = "{".padEnd(text[598]!.length, " ");
  writeFileSync(file, text.join("\n"));
  await t.throwsAsync(run, { message: /corrupt at line 599\b/ });
});

test("the checkpoint's sums per agent are what the rows sum to", async (t) => {
  const month = await fixture();
  checkpointAfter(month, month.month.length);
  const reading = await new EmbeddedUsageHistory(month.usageDir).reading(reportRange({ period: PERIOD }, new Date("2025-04-02T00:00:00Z")));
  const summary = reading.summary?.();
  t.truthy(summary);
  const expected = new Map<string, { rows: number; credits: number; overage: number }>();
  for (const row of month.month as UsageRow[]) {
    if (!Number.isSafeInteger(row.credits)) continue;
    const sums = expected.get(row.agent) ?? { rows: 0, credits: 0, overage: 0 };
    sums.rows += 1;
    sums.credits += row.credits;
    sums.overage += row.overage ?? 0;
    expected.set(row.agent, sums);
  }
  t.deepEqual(new Map(summary!.agents), expected);
});

test("the report reads the checkpoint's sums, not the month: an edit inside what it counted shows only once it is deleted", async (t) => {
  const month = await fixture();
  const file = `${month.usageDir}/${PERIOD}.jsonl`;
  checkpointAfter(month, month.month.length);
  const config = loadConfigFile(homePaths(month.home).config);
  const now = new Date("2025-04-02T00:00:00Z");
  const byModel = async () => {
    const { out, text } = capture();
    await printUsage(out, config, month.metadata, new EmbeddedUsageHistory(month.usageDir), {
      range: reportRange({ period: PERIOD }, now),
      by: "model",
      format: "csv",
      chart: false,
      allRows: false,
      now,
    });
    return text().stdout;
  };
  // The first row's model renamed in place (same length, far from the hashed end).
  writeFileSync(file, readFileSync(file, "utf8").replace('"model":"anthropic/claude"', '"model":"anthropic/CLAUDE"'));
  t.notRegex(await byModel(), /CLAUDE/);
  rmSync(checkpointFile(month.usageDir, PERIOD));
  t.regex(await byModel(), /anthropic\/CLAUDE,1,10,3\n/);
});

test("a key listing's spend and last use are the same from the months' checkpoints as from their rows", async (t) => {
  const month = await fixture();
  const config = loadConfigFile(homePaths(month.home).config);
  const keys = month.metadata.keys;
  // February too: a lifetime's spend adds it; "this month" is March's log alone.
  const february = (month.month.slice(0, 40) as Array<Record<string, unknown>>).map((row, index) => ({
    ...row,
    id: `feb_${index}`,
    time: `2025-02-10T0${index % 10}:00:00.000Z`,
  }));
  writeFileSync(`${month.usageDir}/2025-02.jsonl`, lines(february));
  writeFileSync(`${month.usageDir}/${PERIOD}.jsonl`, lines(month.month));
  const now = new Date(`${PERIOD}-20T00:00:00Z`);
  const listing = () => keyListing(config, month.metadata, new EmbeddedUsageHistory(month.usageDir), keys, now);
  const whole = await listing();

  // What the rows say, counted here.
  for (const key of keys) {
    const valid = (rows: unknown[]) =>
      (rows as UsageRow[]).filter((row) => row.keyPrefix === key.prefix && Number.isSafeInteger(row.credits) && row.agent !== "");
    const march = valid(month.month);
    const listed = whole.find((entry) => entry.prefix === key.prefix)!;
    t.is(
      listed.spent,
      march.reduce((sum, row) => sum + row.credits, 0),
    );
    t.is(
      listed.lastUsedAt,
      [...march, ...valid(february)]
        .map((row) => row.time)
        .sort()
        .at(-1) ?? null,
    );
  }
  t.true(whole.some((entry) => entry.spent > 0));

  for (const at of [1, 300, month.month.length]) {
    checkpointAfter(month, at);
    UsageLog.open(month.usageDir, new Date("2025-02-15T00:00:00Z"), `${month.usageDir}/feb-watermark.json`).close();
    t.true(existsSync(checkpointFile(month.usageDir, "2025-02")));
    t.deepEqual(await listing(), whole, `checkpoint after ${at} lines`);
  }
  // A lifetime budget counts every month.
  const lifetime = keys.map((key) => ({ ...key, budget: { credits: 1_000_000, period: "total" as const } }));
  const total = await keyListing(config, month.metadata, new EmbeddedUsageHistory(month.usageDir), lifetime, now);
  const marchOnly = new Map(whole.map((entry) => [entry.prefix, entry.spent]));
  t.true(total.some((entry) => entry.spent > marchOnly.get(entry.prefix)!));
});
