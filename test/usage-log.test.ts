// The usage log's write timing: rows of one event-loop turn leave in one write before their
// callers answer, and a stream's socket flush comes after them. Balances count a row at once.

import { readFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { tempSubdir } from "./helpers/temp-dirs.js";
import { usageRow } from "./helpers/usage-rows.js";

const now = new Date();
const row = (id: string, credits: number): UsageRow => usageRow(id, credits, { time: now.toISOString() });

function openLog() {
  const directory = tempSubdir("gw-usage-", "usage");
  const file = path.join(directory, `${periodOf(now)}.jsonl`);
  const ids = () =>
    readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as UsageRow).id);
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

test("a task handed over before the turn's rows runs after they are written and their callers resumed", async (t) => {
  const { log, ids } = openLog();
  const order: string[] = [];
  // As a stream does: its socket flush is handed over at its first write, its row comes later.
  log.afterTurnWrites(() => order.push(`flush task, ${ids().length} row(s) on disk`));
  const written = log.append(row("a", 1)).then(() => order.push("caller resumed"));
  t.deepEqual(order, []);
  await written;
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(order, ["caller resumed", "flush task, 1 row(s) on disk"]);
  log.close();
});
