// The embedded storage index as a start builds it from the records on disk: whatever order the
// records were written (and the directory lists them) in, the pages and cursors are in id order,
// newest first, stable from one page to the next, and they stay so as files are added (also one
// whose id sorts between others) and removed.

import { writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { newFileId } from "../src/gateway/storage/stored-file.js";
import { type FileRecord, FileRecordStore } from "../src/store/file-records.js";
import { LocalFileState } from "../src/store/local-file-state.js";
import { tempDir } from "./helpers/temp-dirs.js";

const AGENT = "agt_index";

function record(id: string, index: number): FileRecord {
  return { id, agentId: AGENT, filename: `f${index}.txt`, contentType: "text/plain", sizeBytes: index, createdAt: new Date(0).toISOString(), state: "ready" };
}

/** `count` records written straight to disk in a shuffled order, and their ids oldest first. */
async function recordsOnDisk(count: number): Promise<{ directory: string; ids: string[] }> {
  const directory = tempDir("gw-index-");
  const ids = Array.from({ length: count }, (_, index) => newFileId(1_700_000_000_000 + index * 1000));
  const { store } = await FileRecordStore.open(path.join(directory, "records"));
  const order = ids.map((id, index) => ({ id, index, key: (index * 7919) % count })).sort((a, b) => a.key - b.key);
  for (const { id, index } of order) await store.save(record(id, index));
  // Not a record: left alone.
  writeFileSync(path.join(directory, "records", AGENT, "notes.txt"), "not a record");
  return { directory, ids };
}

async function opened(directory: string): Promise<LocalFileState> {
  const state = await LocalFileState.open(directory);
  const recovery = state.recovery!;
  for (const found of recovery.records) recovery.restore(found);
  recovery.done();
  return state;
}

async function allPages(state: LocalFileState, limit: number): Promise<string[]> {
  const seen: string[] = [];
  for (let page = 1; ; page += 1) {
    const { records, total } = await state.page(AGENT, page, limit);
    if (records.length === 0) return seen;
    seen.push(...records.map((each) => each.id));
    if (seen.length > total) throw new Error("more records than the total");
  }
}

test("records written in any order list newest first, page after page, and by cursor both ways", async (t) => {
  const { directory, ids } = await recordsOnDisk(1000);
  const state = await opened(directory);
  const newestFirst = [...ids].reverse();
  t.deepEqual(await allPages(state, 100), newestFirst);
  t.deepEqual(await allPages(state, 7), newestFirst);
  t.is((await state.page(AGENT, 1, 100)).total, 1000);
  t.deepEqual(await state.page(AGENT, 1000 / 50 + 1, 50), { records: [], total: 1000 });

  const ascending: string[] = [];
  let after: string | undefined;
  for (;;) {
    const { records, hasMore } = await state.listFrom(AGENT, { after, limit: 64, order: "asc" });
    ascending.push(...records.map((each) => each.id));
    after = records.at(-1)?.id;
    if (!hasMore) break;
  }
  t.deepEqual(ascending, ids);
  const middle = await state.listFrom(AGENT, { after: ids[500], limit: 3, order: "desc" });
  t.deepEqual(
    middle.records.map((each) => each.id),
    [ids[499], ids[498], ids[497]],
  );
  t.true(middle.hasMore);
});

test("a file added or removed takes or leaves its place in id order, and the other pages stay as they were", async (t) => {
  const { directory, ids } = await recordsOnDisk(300);
  const state = await opened(directory);
  // An id between two others (as a restored or migrated record may be), and the newest one.
  const taken = new Set(ids);
  const between = [..."0123456789ABCDEFGHJKMNPQRSTVWXYZ"].map((last) => `${ids[150]!.slice(0, -2)}${last}${last}`).find((id) => !taken.has(id))!;
  const expected = [...ids];
  for (const id of [between, newFileId(Date.now())]) {
    t.true(await state.save(record(id, 9999)));
    expected.push(id);
  }
  expected.sort();
  t.deepEqual(await allPages(state, 40), [...expected].reverse());
  await state.remove({ agentId: AGENT, id: ids[10]! });
  expected.splice(expected.indexOf(ids[10]!), 1);
  t.deepEqual(await allPages(state, 40), [...expected].reverse());
  t.is((await state.page(AGENT, 1, 40)).total, 301);

  // A new start reads the same index from the records.
  t.deepEqual(await allPages(await opened(directory), 40), [...expected].reverse());
});
