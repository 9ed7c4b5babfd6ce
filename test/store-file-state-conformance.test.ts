import path from "node:path";
import test from "ava";
import { newFileId } from "../src/gateway/storage/stored-file.js";
import type { FileRecord } from "../src/store/file-records.js";
import type { FileStateRecords } from "../src/store/file-state.js";
import { LocalFileState } from "../src/store/local-file-state.js";
import { RedisFileState } from "../src/store/redis-file-state.js";
import { eventually } from "./helpers/eventually.js";
import { redisForTests } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

const redis = redisForTests(test);

interface Opened {
  state: FileStateRecords;
  /** Another handle on the same state (another instance, for Redis). */
  twin: FileStateRecords;
}

const implementations: Array<{ name: string; open(): Promise<Opened> }> = [
  {
    name: "embedded",
    async open() {
      const dir = tempDir("gw-file-state-");
      const state = await LocalFileState.open(dir);
      return { state, twin: state };
    },
  },
  {
    name: "redis",
    async open() {
      const prefix = redis.prefix();
      return { state: new RedisFileState(redis.client(), prefix), twin: new RedisFileState(redis.client(), prefix) };
    },
  },
];

function record(agentId: string, change: Partial<FileRecord> = {}): FileRecord {
  return {
    id: newFileId(Date.now()),
    agentId,
    filename: "a file — ✓.txt",
    contentType: "text/plain",
    sizeBytes: 100,
    createdAt: new Date().toISOString(),
    state: "ready",
    ...change,
  };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

for (const implementation of implementations) {
  const name = (what: string) => `${implementation.name}: ${what}`;

  test(name("saved records are found by id, listed newest first with a total, and counted; uploads in progress are neither"), async (t) => {
    const { state, twin } = await implementation.open();
    const files = [
      record("agt_a", { sizeBytes: 10 }),
      record("agt_a", { sizeBytes: 20 }),
      record("agt_a", { sizeBytes: 30, state: "pending", uploadExpires: nowSeconds() + 60 }),
    ];
    for (const file of files) t.true(await state.save(file));
    const uploading = record("agt_a", { sizeBytes: 0, state: "uploading" });
    t.true(await state.save(uploading));
    const other = record("agt_b", { sizeBytes: 7 });
    await twin.save(other);

    t.deepEqual(await twin.find(files[1]!.id), files[1]);
    t.deepEqual(await twin.find(other.id), other);
    t.is(await twin.find(uploading.id), undefined);
    t.is(await twin.find(newFileId(Date.now())), undefined);

    const first = await twin.page("agt_a", 1, 2);
    t.is(first.total, 3);
    t.deepEqual(
      first.records.map((file) => file.id),
      [files[2]!.id, files[1]!.id],
    );
    t.deepEqual((await twin.page("agt_a", 2, 2)).records, [files[0]]);
    t.deepEqual((await twin.page("agt_a", 3, 2)).records, []);
    t.deepEqual((await twin.space("agt_a")).usedBytes, 60);
    t.deepEqual(await twin.totals(), { files: 4, bytes: 67 });

    // A record replaced (pending -> ready) counts once, with its new size.
    const ready: FileRecord = { ...files[2]!, state: "ready", sizeBytes: 31 };
    delete ready.uploadExpires;
    t.true(await twin.save(ready, { ifPresent: true }));
    t.deepEqual(await state.find(ready.id), ready);
    t.is((await state.space("agt_a")).usedBytes, 61);
    t.is((await state.page("agt_a", 1, 10)).total, 3);

    t.deepEqual(await state.remove(files[0]!), files[0]);
    t.is(await twin.remove(files[0]!), undefined);
    t.is(await twin.find(files[0]!.id), undefined);
    t.is((await twin.space("agt_a")).usedBytes, 51);
    t.deepEqual(await twin.totals(), { files: 3, bytes: 58 });
    // The intent record of an upload goes without touching the counts.
    t.is(await twin.remove(uploading), undefined);
    t.deepEqual(await state.totals(), { files: 3, bytes: 58 });
    t.is((await state.page("agt_a", 1, 10)).total, 2);
  });

  test(name("listFrom: a cursor over the agent's files by id, oldest or newest first, from just past `after`, saying whether more follow"), async (t) => {
    const { state, twin } = await implementation.open();
    const files = Array.from({ length: 5 }, (_, index) => record("agt_l", { sizeBytes: index }));
    files.push(record("agt_l", { state: "pending", uploadExpires: nowSeconds() + 60 }));
    for (const file of files) await state.save(file);
    await state.save(record("agt_l", { state: "uploading", sizeBytes: 0 }));
    await twin.save(record("agt_l_other"));
    const ids = files.map((file) => file.id);
    const newest = [...ids].reverse();
    const listed = async (query: Parameters<FileStateRecords["listFrom"]>[1]) => {
      const page = await twin.listFrom("agt_l", query);
      return { ids: page.records.map((file) => file.id), hasMore: page.hasMore };
    };

    t.deepEqual(await listed({ limit: 2, order: "desc" }), { ids: newest.slice(0, 2), hasMore: true });
    t.deepEqual(await listed({ after: newest[1], limit: 2, order: "desc" }), { ids: newest.slice(2, 4), hasMore: true });
    t.deepEqual(await listed({ after: newest[3], limit: 2, order: "desc" }), { ids: newest.slice(4), hasMore: false });
    t.deepEqual(await listed({ after: newest[5], limit: 2, order: "desc" }), { ids: [], hasMore: false });
    t.deepEqual(await listed({ limit: 4, order: "asc" }), { ids: ids.slice(0, 4), hasMore: true });
    t.deepEqual(await listed({ after: ids[3], limit: 2, order: "asc" }), { ids: ids.slice(4), hasMore: false });
    t.deepEqual(await listed({ limit: 6, order: "asc" }), { ids, hasMore: false });
    t.deepEqual(await listed({ limit: 100, order: "desc" }), { ids: newest, hasMore: false });
    // The records themselves, as saved.
    t.deepEqual((await twin.listFrom("agt_l", { after: ids[0], limit: 1, order: "asc" })).records, [files[1]]);

    // `after` is a position, not a file that must exist: one removed, or never stored, still places the cursor.
    await state.remove(files[2]!);
    t.deepEqual(await listed({ after: ids[2], limit: 10, order: "asc" }), { ids: ids.slice(3), hasMore: false });
    t.deepEqual(await listed({ after: ids[2], limit: 10, order: "desc" }), { ids: [ids[1], ids[0]], hasMore: false });
    const later = newFileId(Date.now());
    t.deepEqual(await listed({ after: later, limit: 10, order: "asc" }), { ids: [], hasMore: false });
    t.deepEqual(
      (await listed({ after: later, limit: 10, order: "desc" })).ids,
      newest.filter((id) => id !== ids[2]),
    );
    t.deepEqual(await twin.listFrom("agt_nobody", { limit: 10, order: "desc" }), { records: [], hasMore: false });
  });

  test(name("a record's purpose is kept as saved"), async (t) => {
    const { state, twin } = await implementation.open();
    const batch = record("agt_purpose", { purpose: "batch" });
    await state.save(batch);
    t.deepEqual(await twin.find(batch.id), batch);
    t.deepEqual((await twin.listFrom("agt_purpose", { limit: 10, order: "asc" })).records, [batch]);
    t.deepEqual((await twin.page("agt_purpose", 1, 10)).records, [batch]);
  });

  test(name("a write that waits for its record (ifPresent) loses to a delete: it is not written back"), async (t) => {
    const { state, twin } = await implementation.open();
    const pending = record("agt_c", { state: "pending", uploadExpires: nowSeconds() + 60 });
    await state.save(pending);
    await twin.remove(pending);
    t.false(await state.save({ ...pending, state: "ready" }, { ifPresent: true }));
    t.is(await twin.find(pending.id), undefined);
    t.is((await twin.space("agt_c")).usedBytes, 0);
    t.is((await twin.page("agt_c", 1, 10)).total, 0);
  });

  test(name("grants taken at once through both handles never pass the quota; what was granted is given back or becomes used"), async (t) => {
    const { state, twin } = await implementation.open();
    const handles = [state, twin];
    const grants = await Promise.all(Array.from({ length: 40 }, (_, index) => handles[index % 2]!.grantBytes("agt_q", `up-${index}`, 100, 100, 1000)));
    t.is(grants.filter((grant) => grant.ok).length, 10);
    t.true(grants.every((grant) => (grant.ok ? grant.grantedBytes === 100 : grant.grantedBytes === 0)));
    t.deepEqual(await state.space("agt_q"), { usedBytes: 0, reservedBytes: 1000 });
    const refused = await twin.grantBytes("agt_q", "late", 1, 1, 1000);
    t.deepEqual(refused, { ok: false, grantedBytes: 0, usedBytes: 0, reservedBytes: 1000 });

    // Given back: the space is free again, once (a second return changes nothing).
    for (let index = 0; index < 40; index += 1) await handles[(index + 1) % 2]!.returnBytes("agt_q", `up-${index}`);
    await state.returnBytes("agt_q", "up-0");
    t.deepEqual(await twin.space("agt_q"), { usedBytes: 0, reservedBytes: 0 });

    // As much as fits, between min and max; the surplus of a grant goes back when its file is saved.
    t.like(await state.grantBytes("agt_q", "big", 10, 4000, 1000), { ok: true, grantedBytes: 1000 });
    t.like(await twin.grantBytes("agt_q", "small", 1, 10, 1000), { ok: false });
    const stored = record("agt_q", { id: newFileId(Date.now()), sizeBytes: 600 });
    await twin.save(stored, { grant: "big" });
    t.deepEqual(await state.space("agt_q"), { usedBytes: 600, reservedBytes: 0 });
    t.like(await state.grantBytes("agt_q", "rest", 400, 400, 1000), { ok: true, grantedBytes: 400 });
    t.like(await twin.grantBytes("agt_q", "one-more", 1, 1, 1000), { ok: false, usedBytes: 600, reservedBytes: 400 });
    // A zero-byte file fits a full quota, as it always did; nothing fits a quota already passed.
    t.like(await twin.grantBytes("agt_q", "empty", 0, 0, 1000), { ok: true, grantedBytes: 0 });
    t.like(await twin.grantBytes("agt_q", "empty-2", 0, 0, 500), { ok: false });
  });

  test(name("operations taken through both handles never pass the period's limit; released ones are free again, committed ones counted"), async (t) => {
    const { state, twin } = await implementation.open();
    const handles = [state, twin];
    const period = new Date().toISOString().slice(0, 7);
    const tickets = await Promise.all(Array.from({ length: 12 }, (_, index) => handles[index % 2]!.takeOperation("agt_o", period, 5)));
    const taken = tickets.filter((ticket) => ticket !== null);
    t.is(taken.length, 5);
    t.is(await twin.takeOperation("agt_o", period, 5), null);
    await taken[0]!.release();
    await taken[0]!.release();
    const again = await twin.takeOperation("agt_o", period, 5);
    t.truthy(again);
    t.is(await state.takeOperation("agt_o", period, 5), null);
    for (const ticket of [...taken.slice(1), again!]) {
      await ticket.commit({ time: new Date().toISOString(), agent: "agt_o", op: "upload", file: newFileId(Date.now()) });
    }
    // A second commit of one ticket counts nothing more.
    await again!.commit({ time: new Date().toISOString(), agent: "agt_o", op: "upload", file: "x" });
    t.is(await state.operationCount("agt_o", period), 5);
    t.is(await twin.operationCount("agt_o", period), 5);
    t.is(await twin.takeOperation("agt_o", period, 5), null);
    t.truthy(await twin.takeOperation("agt_o", period, 6));
    t.is(await state.operationCount("agt_o", "2001-01"), 0);
    t.is(await state.operationCount("agt_other", period), 0);
  });

  test(name("a link is received by one upload at a time: claimed through one handle, refused through the other until released"), async (t) => {
    const { state, twin } = await implementation.open();
    const id = newFileId(Date.now());
    const claim = await state.claimReceiving(id, 60_000);
    t.truthy(claim);
    t.is(await twin.claimReceiving(id, 60_000), null);
    t.is(await state.claimReceiving(id, 60_000), null);
    t.truthy(await twin.claimReceiving(newFileId(Date.now()), 60_000));
    await claim!.release();
    const next = await twin.claimReceiving(id, 60_000);
    t.truthy(next);
    // An old claim's release does not free the link held by the next one.
    await claim!.release();
    t.is(await state.claimReceiving(id, 60_000), null);
  });

  test(name("presigned uploads whose link expired are dropped with their space, unless they are receiving bytes now"), async (t) => {
    const { state, twin } = await implementation.open();
    const now = nowSeconds();
    const expired = record("agt_p", { state: "pending", sizeBytes: 40, uploadExpires: now - 10 });
    const receiving = record("agt_p", { state: "pending", sizeBytes: 50, uploadExpires: now - 5 });
    const live = record("agt_p", { state: "pending", sizeBytes: 60, uploadExpires: now });
    const ready = record("agt_p", { sizeBytes: 70 });
    for (const file of [expired, receiving, live, ready]) await state.save(file);
    const claim = await twin.claimReceiving(receiving.id, 60_000);
    t.truthy(claim);

    t.deepEqual(await twin.dropExpiredUploads("agt_p", now), [expired]);
    t.deepEqual(await state.dropExpiredUploads("agt_p", now), []);
    t.is(await state.find(expired.id), undefined);
    t.is((await state.space("agt_p")).usedBytes, 180);
    t.is((await twin.page("agt_p", 1, 10)).total, 3);

    await claim!.release();
    t.deepEqual(await state.dropExpiredUploads("agt_p", now), [receiving]);
    t.deepEqual(
      (await twin.page("agt_p", 1, 10)).records.map((file) => file.id),
      [ready.id, live.id],
    );
    t.is((await twin.space("agt_p")).usedBytes, 130);
    t.deepEqual(await twin.dropExpiredUploads("agt_p", now + 1), [live]);
    t.deepEqual(await state.totals(), { files: 1, bytes: 70 });
  });
}

test("embedded: records are the same files as before (one JSON per file), and a restart finds them for recovery", async (t) => {
  const dir = tempDir("gw-file-state-");
  const state = await LocalFileState.open(dir);
  const file = record("agt_r", { sizeBytes: 5 });
  await state.save(file);
  await state
    .takeOperation("agt_r", file.createdAt.slice(0, 7), 10)
    .then((ticket) => ticket?.commit({ time: file.createdAt, agent: "agt_r", op: "upload", file: file.id }));
  await state.close();
  const { readFile } = await import("node:fs/promises");
  t.deepEqual(JSON.parse(await readFile(path.join(dir, "records", "agt_r", `${file.id}.json`), "utf8")), file);
  t.deepEqual(JSON.parse(await readFile(path.join(dir, "operations", `${file.createdAt.slice(0, 7)}.jsonl`), "utf8")), {
    time: file.createdAt,
    agent: "agt_r",
    op: "upload",
    file: file.id,
  });
  const reopened = await LocalFileState.open(dir);
  t.deepEqual(reopened.recovery?.records, [file]);
  t.is(await reopened.operationCount("agt_r", file.createdAt.slice(0, 7)), 1);
});

test("embedded: a record's purpose comes back after a restart; a record with an unknown purpose refuses the start", async (t) => {
  const dir = tempDir("gw-file-state-");
  const state = await LocalFileState.open(dir);
  const file = record("agt_rp", { purpose: "fine-tune" });
  await state.save(file);
  await state.close();
  t.deepEqual((await LocalFileState.open(dir)).recovery?.records, [file]);

  const { writeFile } = await import("node:fs/promises");
  await writeFile(path.join(dir, "records", "agt_rp", `${file.id}.json`), JSON.stringify({ ...file, purpose: "anything" }));
  await t.throwsAsync(LocalFileState.open(dir), { message: /is not a gw file record/ });
});

test("redis: the grants and operations of an instance that died come back once their lease lapses", async (t) => {
  const prefix = redis.prefix();
  // The dead instance leased for 200 ms; the live one leases as gw does.
  const dead = new RedisFileState(redis.client(), prefix, 200);
  const live = new RedisFileState(redis.client(), prefix);
  const period = new Date().toISOString().slice(0, 7);
  t.like(await dead.grantBytes("agt_d", "orphan", 1000, 1000, 1000), { ok: true, grantedBytes: 1000 });
  t.truthy(await dead.takeOperation("agt_d", period, 1));
  t.like(await live.grantBytes("agt_d", "new", 1, 1, 1000), { ok: false, reservedBytes: 1000 });
  t.is(await live.takeOperation("agt_d", period, 1), null);
  const grant = await eventually(() => live.grantBytes("agt_d", "new", 1000, 1000, 1000), {
    what: "the dead instance's grant returned",
    until: (answer) => answer.ok,
  });
  t.deepEqual(grant, { ok: true, grantedBytes: 1000, usedBytes: 0, reservedBytes: 0 });
  t.truthy(
    await eventually(() => live.takeOperation("agt_d", period, 1), { what: "the dead instance's operation returned", until: (ticket) => ticket !== null }),
  );
  t.deepEqual(await live.space("agt_d"), { usedBytes: 0, reservedBytes: 1000 });
});
