// Hostile cases for the usage log: rows that would switch billing off (credits null or not a
// number), and usage logs that were deleted or cut short, which must not reset every balance to
// the full allowance. The high-water mark (data/usage-watermark.json) is what remembers them.

import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { homePaths } from "../../src/config/paths.js";
import { startServer } from "../../src/server/start-server.js";
import { StoreError } from "../../src/store/store-error.js";
import { periodOf, UsageLog, type UsageRow } from "../../src/store/usage-log.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai.js";
import { eventually } from "../helpers/eventually.js";
import { addKey, gw, json, makeHome, spawnServe } from "../helpers/gateway-harness.js";
import { tempDir } from "../helpers/temp-dirs.js";
import { usageLines, usageRow } from "../helpers/usage-rows.js";

const now = new Date();
const period = periodOf(now);

const row = (id: string, credits: unknown, agent: unknown = "agent-1"): UsageRow => usageRow(id, credits, { time: now.toISOString(), agent });

const lines = usageLines;

/** A data directory laid out as in a gw home: data/usage/ and data/usage-watermark.json beside it. */
function dataDirectory() {
  const dataDir = path.join(tempDir("gw-durable-"), "data");
  const usageDir = path.join(dataDir, "usage");
  mkdirSync(usageDir, { recursive: true });
  return { usageDir, mark: path.join(dataDir, "usage-watermark.json"), log: (name = period) => path.join(usageDir, `${name}.jsonl`) };
}

const readMark = (file: string) =>
  JSON.parse(readFileSync(file, "utf8")) as { version: number; periods: Record<string, { rows: number; credits: number; bytes: number }> };
const sizeOf = (file: string) => statSync(file).size;

/** Three rows (10 + 20 + 30 credits) written and acknowledged, then the log closed. */
async function writtenAndClosed() {
  const directory = dataDirectory();
  const log = UsageLog.open(directory.usageDir, now);
  await Promise.all([log.append(row("a", 10)), log.append(row("b", 20)), log.append(row("c", 30))]);
  log.close();
  return directory;
}

const recoveryMessage = (file: string) =>
  new RegExp(`${escapeRegExp(file)}[\\s\\S]*restore[\\s\\S]*backup[\\s\\S]*delete [\\s\\S]*usage-watermark\\.json`, "i");
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

test("append refuses a row whose credits or agent are invalid, and writes nothing", async (t) => {
  const { usageDir, log: logFile } = dataDirectory();
  const log = UsageLog.open(usageDir, now);
  const invalid: Array<[string, UsageRow]> = [
    ["credits null", row("n", null)],
    ["credits a string", row("s", "ten")],
    ["credits negative", row("m", -1)],
    ["credits fractional", row("f", 1.5)],
    ["credits NaN", row("x", Number.NaN)],
    ["credits infinite", row("i", Number.POSITIVE_INFINITY)],
    ["credits beyond a safe integer", row("b", 2 ** 53)],
    ["agent empty", row("e", 5, "")],
    ["agent missing", { ...row("u", 5), agent: undefined } as unknown as UsageRow],
    ["agent a number", row("k", 5, 42)],
  ];
  for (const [label, bad] of invalid) {
    t.throws(() => void log.append(bad), { instanceOf: StoreError }, label);
  }
  await new Promise((resolve) => setImmediate(resolve));
  t.is(existsSync(logFile()) ? readFileSync(logFile(), "utf8") : "", "", "nothing was written");
  t.is(log.creditsUsed("agent-1", period), 0, "balances are untouched (and never NaN)");

  await log.append(row("ok", 5));
  t.is(log.creditsUsed("agent-1", period), 5);
  t.is(readFileSync(logFile(), "utf8"), lines(row("ok", 5)));
  log.close();
});

test('a log with a null-credits row and a "ten" row loads; totals count only valid rows; warnings name file and line', (t) => {
  const { usageDir, log: logFile } = dataDirectory();
  writeFileSync(logFile(), lines(row("a", 5), row("b", null), row("c", 7), row("d", "ten"), row("e", 3, "")) + lines(row("f", 11)));
  const log = UsageLog.open(usageDir, now);
  t.is(log.creditsUsed("agent-1", period), 5 + 7 + 11);
  t.false(Number.isNaN(log.creditsUsed("agent-1", period)));
  t.is(log.warnings.length, 3);
  t.regex(log.warnings[0]!, new RegExp(`${escape(logFile())}.*line 2\\b.*credits`));
  t.regex(log.warnings[1]!, new RegExp(`${escape(logFile())}.*line 4\\b.*credits`));
  t.regex(log.warnings[2]!, new RegExp(`${escape(logFile())}.*line 5\\b.*agent`));
  t.deepEqual(
    UsageLog.readRows(usageDir, period).map((each) => each.id),
    ["a", "c", "f"],
    "reports see the valid rows",
  );
  log.close();
});

test("a line that is not JSON in the middle still refuses to open; a torn last line is still dropped", (t) => {
  const corrupt = dataDirectory();
  writeFileSync(corrupt.log(), `${lines(row("a", 5))}{broken\n${lines(row("c", 7))}`);
  t.throws(() => UsageLog.open(corrupt.usageDir, now), { instanceOf: StoreError, message: /corrupt at line 2/ });

  const torn = dataDirectory();
  writeFileSync(torn.log(), `${lines(row("a", 5))}${JSON.stringify(row("torn", 9)).slice(0, 30)}`);
  const log = UsageLog.open(torn.usageDir, now);
  t.is(log.creditsUsed("agent-1", period), 5);
  t.is(readFileSync(torn.log(), "utf8"), lines(row("a", 5)));
  log.close();
});

test("the server starts on a log with invalid rows and logs a warning naming each line", async (t) => {
  const home = await makeHome();
  const file = path.join(homePaths(home).usageDir, `${period}.jsonl`);
  writeFileSync(file, lines(row("a", 5), row("b", null), row("c", "ten")));
  const warnings: string[] = [];
  const logger = { info: () => undefined, warn: (message: string) => warnings.push(message), error: () => undefined, access: () => undefined };
  const server = await startServer({ home, host: "127.0.0.1", port: 0, logger });
  try {
    t.is((await server.gateway.ledger.planBalance("agent-1", 0)).used, 5);
    t.true(
      warnings.some((message) => message.includes(file) && /line 2\b/.test(message)),
      warnings.join("\n"),
    );
    t.true(
      warnings.some((message) => message.includes(file) && /line 3\b/.test(message)),
      warnings.join("\n"),
    );
  } finally {
    await server.shutdown();
  }
});

test("`gw usage` shows the valid rows of a log with invalid rows and says how many were skipped", async (t) => {
  const home = await makeHome();
  await addKey(home, "dave", "free");
  const file = path.join(homePaths(home).usageDir, `${period}.jsonl`);
  writeFileSync(file, lines(row("a", 1500, "dave"), row("b", null, "dave"), row("c", 500, "dave"), row("d", "ten", "dave")));
  const [asJson, asTable] = await Promise.all([gw(["usage", "--json"], { home }), gw(["usage"], { home })]);
  t.is(asJson.code, 0, asJson.stderr);
  const report = json<{ agents: Array<{ agent: string; used: number; balance: number }>; rows: UsageRow[]; skipped: number }>(asJson);
  t.deepEqual(report.agents, [{ agent: "dave", plan: "free", used: 2000, balance: 1_000_000 - 2000 }]);
  t.deepEqual(
    report.rows.map((each) => each.id),
    ["a", "c"],
  );
  t.is(report.skipped, 2);
  t.is(asTable.code, 0, asTable.stderr);
  t.regex(asTable.stdout, /^dave\s+free\s+2,000\s+998,000$/m);
  t.regex(asTable.stdout, /2 invalid rows skipped/);
  t.regex(asTable.stderr, /line 2\b[\s\S]*line 4\b/, "the lines are named");
});

test("a deleted usage log refuses to open, naming the file, the mark and the way out; deleting the mark accepts the loss", async (t) => {
  const { usageDir, mark, log: logFile } = await writtenAndClosed();
  t.deepEqual(readMark(mark).periods[period], { rows: 3, credits: 60, bytes: sizeOf(logFile()) }, "close wrote the mark");
  rmSync(logFile());
  const error = t.throws(() => UsageLog.open(usageDir, now), { instanceOf: StoreError });
  t.regex(error!.message, /missing/);
  t.regex(error!.message, /3 rows/);
  t.regex(error!.message, /60 credits/);
  t.regex(error!.message, recoveryMessage(logFile()));
  t.false(existsSync(logFile()), "refusing wrote nothing");

  rmSync(mark);
  const log = UsageLog.open(usageDir, now);
  t.is(log.creditsUsed("agent-1", period), 0);
  log.close();
  t.deepEqual(readMark(mark).periods, {}, "a fresh mark, from the logs that are left");
});

test("a deleted usage folder refuses to open", async (t) => {
  const { usageDir, log: logFile } = await writtenAndClosed();
  rmSync(usageDir, { recursive: true });
  const error = t.throws(() => UsageLog.open(usageDir, now), { instanceOf: StoreError });
  t.regex(error!.message, recoveryMessage(logFile()));
});

test("a usage log with rows cut off its end, or with fewer credits, refuses to open", async (t) => {
  const { usageDir, log: logFile } = await writtenAndClosed();
  const full = readFileSync(logFile(), "utf8");
  writeFileSync(logFile(), `${full.split("\n").slice(0, 2).join("\n")}\n`);
  const short = t.throws(() => UsageLog.open(usageDir, now), { instanceOf: StoreError });
  t.regex(short!.message, /2 rows/);
  t.regex(short!.message, /3 rows/);
  t.regex(short!.message, recoveryMessage(logFile()));

  writeFileSync(logFile(), full.replace('"credits":30', '"credits":3'));
  const cheaper = t.throws(() => UsageLog.open(usageDir, now), { instanceOf: StoreError });
  t.regex(cheaper!.message, /33 credits/);
  t.regex(cheaper!.message, /60 credits/);

  writeFileSync(logFile(), full);
  t.is(UsageLog.open(usageDir, now).creditsUsed("agent-1", period), 60, "the restored log opens");
});

test("an old home without a mark starts and gets one built from its logs; a fresh one gets an empty mark", (t) => {
  const old = dataDirectory();
  writeFileSync(old.log(), lines(row("a", 10), row("b", null), row("c", 20)));
  writeFileSync(old.log("2020-01"), lines(row("z", 7)));
  const log = UsageLog.open(old.usageDir, now);
  t.is(log.creditsUsed("agent-1", period), 30);
  t.deepEqual(readMark(old.mark), {
    version: 1,
    periods: { "2020-01": { rows: 1, credits: 7, bytes: sizeOf(old.log("2020-01")) }, [period]: { rows: 2, credits: 30, bytes: sizeOf(old.log()) } },
  });
  log.close();
  // An earlier month is measured, not read: a log cut short is found by its size.
  const earlier = readFileSync(old.log("2020-01"), "utf8");
  writeFileSync(old.log("2020-01"), earlier.slice(0, 10));
  t.throws(() => UsageLog.open(old.usageDir, now), { instanceOf: StoreError, message: /2020-01\.jsonl has 10 bytes, less than/ });
  rmSync(old.log("2020-01"));
  t.throws(() => UsageLog.open(old.usageDir, now), { instanceOf: StoreError, message: /2020-01\.jsonl/ });

  const fresh = dataDirectory();
  UsageLog.open(fresh.usageDir, now).close();
  t.deepEqual(readMark(fresh.mark), { version: 1, periods: {} });
});

test("a corrupt mark refuses to open and says so", async (t) => {
  const { usageDir, mark } = await writtenAndClosed();
  writeFileSync(mark, '{"version":1,"periods":{');
  const error = t.throws(() => UsageLog.open(usageDir, now), { instanceOf: StoreError });
  t.regex(error!.message, /usage-watermark\.json is corrupt/);
});

test("while running, the mark claims rows only once they have settled; a clean close saves the exact mark", async (t) => {
  const { usageDir, mark } = dataDirectory();
  const logFile = path.join(usageDir, `${period}.jsonl`);
  // A settle time of 2 s stands for the minute a running server waits (long beside the pause below,
  // so a slow machine cannot make the row settle before we look).
  const log = UsageLog.open(usageDir, now, undefined, { markSettleMs: 2000 });
  const before = readFileSync(mark, "utf8");
  await log.append(row("a", 10));
  t.is(readFileSync(mark, "utf8"), before, "an acknowledged row did not wait for the mark");
  // Proving a save does NOT come early: the mark's first snapshot is taken at once after the write;
  // a short pause gives a wrong early save the time to land.
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.is(readMark(mark).periods[period], undefined, "not yet settled: a power cut now could still take the row from the log");
  await eventually(() => readMark(mark).periods[period] !== undefined, "the mark to claim the settled row");
  t.deepEqual(readMark(mark).periods[period], { rows: 1, credits: 10, bytes: sizeOf(logFile) }, "settled, and saved without close");

  // A row written just before a clean close is in the mark at once.
  await log.append(row("b", 5));
  log.close();
  t.deepEqual(readMark(mark).periods[period], { rows: 2, credits: 15, bytes: sizeOf(logFile) });
});

test("a running server's mark lags by the settle time, so a log that lost its last seconds (a power cut) still opens", async (t) => {
  const { usageDir, mark } = dataDirectory();
  const logFile = path.join(usageDir, `${period}.jsonl`);
  const log = UsageLog.open(usageDir, now, undefined, { markSettleMs: 60_000 });
  await log.append(row("a", 10));
  // Proving the mark does NOT claim the row: its first snapshot is taken at once after the write
  // (the next only after the settle time); a short pause gives a wrong save the time to land.
  await new Promise((resolve) => setTimeout(resolve, 200));
  // The process dies without close, and the machine with it: the log's last row never reached the disk.
  const written = readFileSync(logFile, "utf8");
  writeFileSync(logFile, "");
  t.is(readMark(mark).periods[period], undefined, "the mark never claimed the unsettled row");
  const reopened = UsageLog.open(usageDir, now);
  t.is(reopened.creditsUsed("agent-1", period), 0);
  reopened.close();
  writeFileSync(logFile, written);
  log.close();
});

test("`gw serve` refuses to start after its usage log was deleted, and starts once the mark is deleted", async (t) => {
  const fake: FakeOpenAI = await startFakeOpenAI();
  try {
    const home = await makeHome((config) => {
      config.providers = { fake: { type: "openai", baseUrl: fake.url, apiKey: "x" } };
      config.routes = [{ prefix: "fake/", provider: "fake" }];
    });
    const key = await addKey(home, "spender", "pro");
    const serve = await spawnServe(home);
    const response = await fetch(`${serve.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "fake/x", messages: [{ role: "user", content: "one two three" }] }),
    });
    t.is(response.status, 200);
    serve.child.kill("SIGTERM");
    t.is(await serve.exited, 0);

    const paths = homePaths(home);
    const file = path.join(paths.usageDir, `${period}.jsonl`);
    rmSync(file);
    const error = await t.throwsAsync(spawnServe(home));
    t.regex(error!.message, recoveryMessage(file));

    rmSync(path.join(paths.dataDir, "usage-watermark.json"));
    const again = await spawnServe(home);
    again.child.kill("SIGTERM");
    t.is(await again.exited, 0);
  } finally {
    await fake.close();
  }
});
