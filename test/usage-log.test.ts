// The usage log's write timing: rows of one event-loop turn leave in one write before their
// callers answer; a stream's row can be written at once. Balances count a row immediately.
import test from "ava";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { UsageLog, periodOf, type UsageRow } from "../src/store/usage-log.js";

const now = new Date();
const row = (id: string, credits: number): UsageRow => ({
  id,
  time: now.toISOString(),
  agent: "agent-1",
  keyPrefix: "gw_abcdefgh",
  endpoint: "chat.completions",
  model: "m/x",
  provider: "p",
  units: { prompt_tokens: 1, completion_tokens: 2 },
  credits,
  requestId: `req-${id}`,
});

function openLog() {
  const directory = mkdtempSync(path.join(tmpdir(), "gw-usage-"));
  const file = path.join(directory, `${periodOf(now)}.jsonl`);
  const ids = () => readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((line) => (JSON.parse(line) as UsageRow).id);
  return { log: UsageLog.open(directory, now), ids };
}

test("rows of one turn are written together, before their callers go on; balances count them at once", async (t) => {
  const { log, ids } = openLog();
  const first = log.append(row("a", 5));
  const second = log.append(row("b", 7));
  t.is(log.creditsUsed("agent-1", periodOf(now)), 12);
  t.deepEqual(ids(), [], "not yet written: they wait for the end of the turn");
  await Promise.all([first, second]);
  t.deepEqual(ids(), ["a", "b"]);
  log.close();
});

test("writeNow writes at once, with the rows already waiting in this turn", async (t) => {
  const { log, ids } = openLog();
  const waiting = log.append(row("a", 1));
  const immediate = log.append(row("b", 1), { writeNow: true });
  t.deepEqual(ids(), ["a", "b"], "on disk before the call returned");
  await Promise.all([waiting, immediate]);
  t.deepEqual(ids(), ["a", "b"], "and never twice");
  t.deepEqual(UsageLog.readRows(log.directory, periodOf(now)).map((written) => written.id), ["a", "b"]);
  log.close();
});
