// The usage log's checkpoint (data/usage/YYYY-MM.totals.json): a start reads only the rows after
// it, and every balance, warning and refusal is what reading the whole log gives. A checkpoint
// that does not fit the log (cut short, replaced, damaged) is ignored. And the line readers under
// both the start and the reports cut lines exactly as a naive split does, at any chunk boundary.

import { appendFileSync, existsSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { StoreError } from "../src/store/store-error.js";
import { checkpointFile } from "../src/store/usage-checkpoint.js";
import { readLines, readLinesBackward, readLinesSync, someLineHolding } from "../src/store/usage-lines.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { usageLogSlices, usageRows } from "../src/store/usage-rows.js";
import { eventually } from "./helpers/eventually.js";
import { tempSubdir } from "./helpers/temp-dirs.js";
import { usageLines, usageRow } from "./helpers/usage-rows.js";

const now = new Date();
const period = periodOf(now);
const lastMonth = periodOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)));

const row = (id: string, credits: unknown, agent: unknown = "agent-1", keyPrefix = "gw_key1", time = now.toISOString()): UsageRow =>
  usageRow(id, credits, { time, agent, keyPrefix });

const lines = usageLines;

function usageDirectory() {
  const usageDir = tempSubdir("gw-checkpoint-", "usage");
  return { usageDir, log: (name = period) => path.join(usageDir, `${name}.jsonl`), checkpoint: (name = period) => checkpointFile(usageDir, name) };
}

/** Every balance the log keeps, for comparing two opens. */
function balances(log: UsageLog, month = period) {
  const agents = ["agent-1", "agent-2", "agent-3"].map((agent) => log.creditsUsed(agent, month));
  const keys = ["gw_key1", "gw_key2", "gw_key3"].map((key) => log.keyCreditsUsed(key, month));
  return { agents, keys, warnings: [...log.warnings] };
}

/** The same log opened without its checkpoint: what reading it whole gives. */
function wholeRead(usageDir: string, month = period) {
  const saved = checkpointFile(usageDir, month);
  const kept = existsSync(saved) ? readFileSync(saved) : null;
  rmSync(saved, { force: true });
  const log = UsageLog.open(usageDir, now);
  const result = balances(log, month);
  log.close();
  if (kept) writeFileSync(saved, kept);
  return result;
}

async function appendRows(log: UsageLog, from: number, count: number) {
  const written: Array<Promise<void>> = [];
  for (let index = from; index < from + count; index += 1) {
    written.push(log.append(row(`r${index}`, index % 17, `agent-${(index % 3) + 1}`, `gw_key${(index % 3) + 1}`)));
  }
  await Promise.all(written);
}

test("a clean close checkpoints the month; the next open counts from it and gives what reading the whole log gives", async (t) => {
  const { usageDir, checkpoint } = usageDirectory();
  const log = UsageLog.open(usageDir, now);
  await appendRows(log, 0, 500);
  const before = balances(log);
  log.close();
  t.true(existsSync(checkpoint()), "the close saved a checkpoint");
  const saved = JSON.parse(readFileSync(checkpoint(), "utf8")) as { rows: number; bytes: number };
  t.is(saved.rows, 500);

  const reopened = UsageLog.open(usageDir, now);
  t.deepEqual(balances(reopened), before);
  await appendRows(reopened, 500, 20);
  const after = balances(reopened);
  reopened.close();
  t.deepEqual(wholeRead(usageDir), after);
});

test("while running, the month is checkpointed in the background, only while its totals are exactly the log's", async (t) => {
  const { usageDir, log: logFile, checkpoint } = usageDirectory();
  const log = UsageLog.open(usageDir, now);
  const whileRunning = () => (log as unknown as { checkpointWhileRunning(): void }).checkpointWhileRunning();
  const savedRows = () => (existsSync(checkpoint()) ? (JSON.parse(readFileSync(checkpoint(), "utf8")) as { rows: number }).rows : 0);
  await appendRows(log, 0, 100);
  whileRunning(); // what the minute's timer does
  await eventually(savedRows, { what: "a checkpoint of 100 rows", until: (rows) => rows === 100 });
  // A crash now: the next start counts from the checkpoint and the rows after it.
  await appendRows(log, 100, 5);
  const afterCrash = UsageLog.open(usageDir, now);
  t.deepEqual(balances(afterCrash), wholeRead(usageDir)); // left open: its close would checkpoint
  // A line the log did not write: its totals no longer count the file, so no checkpoint claims it.
  appendFileSync(logFile(), lines(row("foreign", 1000)));
  await appendRows(log, 105, 5);
  whileRunning();
  log.close();
  t.is(savedRows(), 100, "neither the timer nor the close saved totals that miss a line");
});

test("rows written after the checkpoint (a server killed before its close) are counted from the log", async (t) => {
  const { usageDir, log: logFile } = usageDirectory();
  const log = UsageLog.open(usageDir, now);
  await appendRows(log, 0, 300);
  log.close();
  // Another run appends and dies without closing: its rows are only in the log.
  appendFileSync(logFile(), lines(row("late-1", 40, "agent-2", "gw_key2"), row("late-2", 2, "agent-3", "gw_key1")));
  const reopened = UsageLog.open(usageDir, now);
  const counted = balances(reopened);
  reopened.close();
  t.deepEqual(counted, wholeRead(usageDir));
  t.is(counted.agents[1], wholeRead(usageDir).agents[1]);
});

test("a checkpoint that no longer fits the log (cut short and written again, or damaged) is ignored", async (t) => {
  const { usageDir, log: logFile, checkpoint } = usageDirectory();
  const log = UsageLog.open(usageDir, now);
  await appendRows(log, 0, 200);
  log.close();
  const size = statSync(logFile()).size;

  // The log lost its end and other rows took the same bytes: same length, other content.
  const text = readFileSync(logFile(), "utf8");
  const cut = text.lastIndexOf("\n", text.length - 2) + 1;
  const replacement = lines(row("o", 3, "agent-3", "gw_key3"));
  writeFileSync(logFile(), text.slice(0, cut) + replacement.padStart(size - cut, " "));
  t.is(statSync(logFile()).size, size);
  rmSync(path.join(path.dirname(usageDir), "usage-watermark.json")); // accept the loss, as the refusal says
  const kept = readFileSync(checkpoint());
  const counted = UsageLog.open(usageDir, now);
  const result = balances(counted);
  counted.close();
  writeFileSync(checkpoint(), kept);
  t.deepEqual(result, wholeRead(usageDir));

  for (const damaged of ["{not json", JSON.stringify({ version: 99 }), ""]) {
    writeFileSync(checkpoint(), damaged);
    const reopened = UsageLog.open(usageDir, now);
    t.deepEqual(balances(reopened), result, `checkpoint ${JSON.stringify(damaged)}`);
    reopened.close();
  }
});

test("a log cut short below its checkpoint still refuses to open, as its high-water mark says", async (t) => {
  const { usageDir, log: logFile } = usageDirectory();
  const log = UsageLog.open(usageDir, now);
  await appendRows(log, 0, 50);
  log.close();
  truncateSync(logFile(), statSync(logFile()).size - 500);
  t.throws(() => UsageLog.open(usageDir, now), { instanceOf: StoreError, message: /less than the mark records/ });
});

test("invalid rows before and after the checkpoint are named with their lines; a corrupt line after it refuses with its line", async (t) => {
  const { usageDir, log: logFile } = usageDirectory();
  writeFileSync(logFile(), `${lines(row("a", 5), row("b", null))}\n${lines(row("c", 7), row("d", "ten"))}`);
  const first = UsageLog.open(usageDir, now);
  const warnings = [...first.warnings];
  t.is(warnings.length, 2);
  t.regex(warnings[0]!, /line 2\b.*credits/);
  t.regex(warnings[1]!, /line 5\b.*credits/);
  await first.append(row("e", 1));
  first.close();
  appendFileSync(logFile(), lines(row("f", 2, "")));
  const reopened = UsageLog.open(usageDir, now);
  t.deepEqual(reopened.warnings.slice(0, 2), warnings, "the checkpoint keeps the earlier warnings");
  t.regex(reopened.warnings[2]!, /line 7\b.*agent/);
  t.is(reopened.creditsUsed("agent-1", period), 5 + 7 + 1);
  reopened.close();
  appendFileSync(logFile(), "{broken\n");
  t.throws(() => UsageLog.open(usageDir, now), { instanceOf: StoreError, message: /corrupt at line 8\b/ });
});

test("a torn last line after the checkpoint is dropped, as without one", async (t) => {
  const { usageDir, log: logFile } = usageDirectory();
  const log = UsageLog.open(usageDir, now);
  await appendRows(log, 0, 10);
  log.close();
  const whole = readFileSync(logFile(), "utf8");
  appendFileSync(logFile(), JSON.stringify(row("torn", 9)).slice(0, 30));
  const reopened = UsageLog.open(usageDir, now);
  t.is(readFileSync(logFile(), "utf8"), whole);
  await reopened.append(row("next", 4));
  const counted = balances(reopened);
  reopened.close();
  t.deepEqual(counted, wholeRead(usageDir));
});

test("what the checkpoint counted is not read again: an edit inside it is trusted, as earlier months' sizes are", async (t) => {
  const { usageDir, log: logFile } = usageDirectory();
  writeFileSync(logFile(), lines(row("first", 100), ...Array.from({ length: 400 }, (_, index) => row(`r${index}`, 1))));
  UsageLog.open(usageDir, now).close(); // read whole, checkpointed at its close
  // The first row's credits edited in place (same length, far from the hashed end).
  writeFileSync(logFile(), readFileSync(logFile(), "utf8").replace('"credits":100', '"credits":900'));
  const log = UsageLog.open(usageDir, now);
  t.is(log.creditsUsed("agent-1", period), 100 + 400, "counted from the checkpoint");
  log.close();
  t.is(wholeRead(usageDir).agents[0], 900 + 400, "read whole without it");
});

test("a lifetime budget reads an earlier month from its checkpoint and gets what the whole month gives", async (t) => {
  const { usageDir, log: logFile, checkpoint } = usageDirectory();
  const earlier = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15));
  const old = UsageLog.open(usageDir, earlier);
  const written: Array<Promise<void>> = [];
  for (let index = 0; index < 100; index += 1) written.push(old.append(row(`o${index}`, index, "agent-1", `gw_key${(index % 2) + 1}`, earlier.toISOString())));
  await Promise.all(written);
  old.close();
  t.true(existsSync(checkpoint(lastMonth)));
  appendFileSync(logFile(lastMonth), lines(row("after", 1000, "agent-1", "gw_key1", earlier.toISOString())));
  const log = UsageLog.open(usageDir, now);
  const expected = UsageLog.readRows(usageDir, lastMonth)
    .filter((each) => each.keyPrefix === "gw_key1")
    .reduce((sum, each) => sum + each.credits, 0);
  t.is(log.keyCreditsLifetime("gw_key1", period), expected);
  log.close();
});

test("hasRow finds a valid row by its id, not one that only mentions it, nor an invalid row", async (t) => {
  const { usageDir, log: logFile } = usageDirectory();
  const log = UsageLog.open(usageDir, now);
  await appendRows(log, 0, 2000);
  await log.append({ ...row("mentions", 1), requestId: "wanted-id" });
  appendFileSync(logFile(), lines(row("invalid-id", null)));
  t.true(await log.hasRow("r1234", [lastMonth, period]));
  t.true(await log.hasRow("mentions", [period]));
  t.false(await log.hasRow("wanted-id", [period]), "a request id is not a row id");
  t.false(await log.hasRow("invalid-id", [period]), "an invalid row was never billed");
  t.false(await log.hasRow("r1234", [lastMonth]));
  log.close();
});

// --- the line readers ---------------------------------------------------------------------------

/** Lines of every length around the 1 MiB chunk, multi-byte characters on the boundaries, blank lines, CRLF, an unterminated end. */
function awkwardFile(): { file: string; text: string } {
  const file = path.join(tempSubdir("gw-lines-"), "log.jsonl");
  const parts: string[] = [];
  let length = 0;
  let index = 0;
  while (length < 3.5 * 1024 * 1024) {
    const size = [10, 300, 70_000, 1_000_000, 2_500_000, 1][index % 6]!;
    const line = index % 7 === 3 ? "" : index % 5 === 0 ? `{"€":"${"é".repeat(size / 2)}"}\r` : `{"n":${index},"pad":"${"x".repeat(size)}"}`;
    parts.push(line);
    length += Buffer.byteLength(line) + 1;
    index += 1;
  }
  const text = `${parts.join("\n")}\n{"unterminated":`;
  writeFileSync(file, text);
  return { file, text };
}

function naiveLines(text: string) {
  const all = text.split("\n");
  all.pop(); // after the last newline: unterminated
  return all.map((line, at) => ({ text: line, number: at + 1 })).filter((line) => line.text.trim());
}

test("the sync and the streaming line readers cut lines as a naive split does, at any chunk boundary", async (t) => {
  const { file, text } = awkwardFile();
  const expected = naiveLines(text);
  const synced: Array<{ text: string; number: number }> = [];
  const end = readLinesSync(file, { bytes: 0, lines: 0 }, (line, number) => synced.push({ text: line, number }));
  t.deepEqual(synced, expected);
  t.is(end.bytes, Buffer.byteLength(text) - Buffer.byteLength('{"unterminated":'));
  t.is(end.size, Buffer.byteLength(text));
  const streamed: Array<{ text: string; number: number }> = [];
  for await (const batch of readLines(file, Buffer.byteLength(text))) streamed.push(...batch);
  t.deepEqual(streamed, expected);

  // From the middle: the same lines, numbered on.
  const from = expected[4]!;
  const offset =
    Buffer.byteLength(
      text
        .split("\n")
        .slice(0, from.number - 1)
        .join("\n"),
    ) + 1;
  const rest: number[] = [];
  readLinesSync(file, { bytes: offset, lines: from.number - 1 }, (_, number) => rest.push(number));
  t.deepEqual(
    rest,
    expected.slice(4).map((line) => line.number),
  );
  // Backward from the end of the last complete line: the same lines, last first.
  const backward: Array<{ text: string; number: number }> = [];
  for await (const line of readLinesBackward(file, end)) backward.push(line);
  t.deepEqual(backward, [...expected].reverse());
  const fewer: number[] = [];
  for await (const line of readLinesBackward(file, { bytes: offset, lines: from.number - 1 })) fewer.push(line.number);
  t.deepEqual(
    fewer,
    expected
      .slice(0, 4)
      .reverse()
      .map((line) => line.number),
  );
  t.true(await someLineHolding(file, Buffer.byteLength(text), '"n":13,', (line) => line.startsWith('{"n":13,')));
  t.false(await someLineHolding(file, Buffer.byteLength(text), '"unterminated"', () => true), "an unterminated line is not a line");
});

test("a report's rows over several months' logs are each valid row of the range, in order", async (t) => {
  const { usageDir, log: logFile } = usageDirectory();
  const all: Array<{ month: string; row: UsageRow }> = [];
  for (const [at, month] of ["2025-01", "2025-02", "2025-03"].entries()) {
    const rows: UsageRow[] = [];
    for (let index = 0; index < 3000; index += 1) {
      const day = String(1 + (index % 28)).padStart(2, "0");
      rows.push(row(`${month}-${index}`, index % 11 === 0 ? null : index, `agent-${at + 1}`, "gw_key1", `${month}-${day}T12:00:00.000Z`));
    }
    const timeless = row(`${month}-timeless`, 1, "agent-1", "gw_key1", "not a time");
    writeFileSync(logFile(month), `${lines(...rows)}\n${lines(timeless)}`);
    for (const each of [...rows, timeless]) all.push({ month, row: each });
  }
  const range = { since: Date.parse("2025-01-20T00:00:00Z"), until: Date.parse("2025-03-01T00:00:00Z") };
  const got: string[] = [];
  const skipped: string[] = [];
  for await (const batch of usageRows(usageLogSlices(usageDir, range), range, (warning) => skipped.push(warning))) got.push(...batch.map((each) => each.id));
  // February lies whole in the range (every row counts, a time that does not parse too); January in part (such a row cannot be placed).
  const counts = ({ month, row: each }: { month: string; row: UsageRow }) =>
    month === "2025-02" || (Date.parse(each.time) >= range.since && Date.parse(each.time) < range.until);
  const valid = ({ row: each }: { row: UsageRow }) => Number.isSafeInteger(each.credits);
  t.deepEqual(
    got,
    all.filter((each) => counts(each) && valid(each)).map((each) => each.row.id),
  );
  t.is(skipped.length, all.filter((each) => counts(each) && !valid(each)).length);
});
