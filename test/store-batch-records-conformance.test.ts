// The batch store's two implementations through one conformance suite
// (test/state/batch-records.conformance.ts): the embedded one (files in a temp dir) and the Redis
// one against a real redis-server, where two stores on one Redis stand for two gw instances. Then
// what only one of them has: the embedded store's files (what a restart resumes from: records,
// results and counts; a results line a crash cut short; a record that cannot be read), and
// Redis's sharing between instances.
import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { BatchClaimLostError, type BatchRecord } from "../src/store/batch-records.js";
import { LocalBatchStore } from "../src/store/local-batches.js";
import { RedisBatchStore } from "../src/store/redis-batches.js";
import { redisForTests } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";
import { allResults, batchRecordsConformance, lineResult, newAgentId, newBatch } from "./state/batch-records.conformance.js";

const redis = redisForTests(test);
const HOUR_MS = 3_600_000;

batchRecordsConformance(test, "local", async () => {
  const store = await LocalBatchStore.open(path.join(tempDir("gw-batches-"), "batches"));
  return { store, twin: store, close: () => undefined };
});

batchRecordsConformance(test, "redis", async () => {
  const prefix = redis.prefix();
  return { store: new RedisBatchStore(redis.client(), prefix), twin: new RedisBatchStore(redis.client(), prefix), close: () => undefined };
});

/** A batch running in a new store in a temp dir, with `indexes` recorded (every third one failed). */
async function runningBatch(indexes: number[]): Promise<{ directory: string; batch: BatchRecord; store: LocalBatchStore }> {
  const directory = path.join(tempDir("gw-batches-"), "batches");
  const store = await LocalBatchStore.open(directory);
  const batch = newBatch(newAgentId(), { status: "in_progress", requestCounts: { total: 10, completed: 0, failed: 0 } });
  await store.create(batch);
  const claim = await store.claim(batch.id, HOUR_MS);
  for (const index of indexes) await store.addResult(batch.id, lineResult(index, index % 3 !== 0), claim!);
  await claim!.release();
  return { directory, batch, store };
}

test("local: a reopened store has the records, the results in order and the counts; a line recorded before is still refused", async (t) => {
  const { directory, batch, store } = await runningBatch([4, 0, 7]);
  const ended = newBatch(batch.agentId, { status: "completed", completedAt: 5 });
  await store.create(ended);
  const before = await store.get(batch.id);
  t.deepEqual(before?.requestCounts, { total: 10, completed: 2, failed: 1 });
  t.deepEqual(readdirSync(directory).sort(), [`${batch.id}.json`, `${batch.id}.results.jsonl`, `${ended.id}.json`].sort());
  t.deepEqual(JSON.parse(readFileSync(path.join(directory, `${batch.id}.json`), "utf8")), before, "the record file is what a restart resumes from");

  const reopened = await LocalBatchStore.open(directory);
  t.deepEqual(await reopened.get(batch.id), before);
  t.deepEqual(await reopened.get(ended.id), ended);
  t.deepEqual(
    (await reopened.list(batch.agentId, { limit: 10 })).batches.map((each) => each.id),
    [ended.id, batch.id],
  );
  t.deepEqual(
    (await reopened.active()).map((each) => each.id),
    [batch.id],
  );
  t.deepEqual(await allResults(reopened, batch.id), [lineResult(4), lineResult(0, false), lineResult(7)]);
  const claim = await reopened.claim(batch.id, HOUR_MS);
  t.truthy(claim, "claims are not kept across a restart: the batch is claimed again");
  t.false(await reopened.addResult(batch.id, lineResult(7), claim!), "line 7 was recorded before the restart");
  t.true(await reopened.addResult(batch.id, lineResult(5), claim!));
  t.deepEqual((await reopened.get(batch.id))?.requestCounts, { total: 10, completed: 3, failed: 1 });
});

test("local: a results line a crash cut short is dropped at open, so that line is run again", async (t) => {
  const { directory, batch } = await runningBatch([1, 2]);
  const results = path.join(directory, `${batch.id}.results.jsonl`);
  const whole = readFileSync(results);
  appendFileSync(results, JSON.stringify(lineResult(3)).slice(0, 25));
  const reopened = await LocalBatchStore.open(directory);
  t.deepEqual(readFileSync(results), whole, "truncated back to its last whole line");
  t.deepEqual(await allResults(reopened, batch.id), [lineResult(1), lineResult(2)]);
  t.deepEqual((await reopened.get(batch.id))?.requestCounts, { total: 10, completed: 2, failed: 0 });
  const claim = await reopened.claim(batch.id, HOUR_MS);
  t.true(await reopened.addResult(batch.id, lineResult(3, false), claim!));
  t.deepEqual(await allResults(reopened, batch.id), [lineResult(1), lineResult(2), lineResult(3, false)]);
  t.deepEqual((await LocalBatchStore.open(directory).then((again) => allResults(again, batch.id))).length, 3);
});

test("local: the counts follow the results file when a crash came between a result and its record", async (t) => {
  const { directory, batch } = await runningBatch([0, 1, 2, 3]);
  const recordFile = path.join(directory, `${batch.id}.json`);
  // The record as written before the last two results (the results file has all four).
  const record = JSON.parse(readFileSync(recordFile, "utf8")) as BatchRecord;
  writeFileSync(recordFile, JSON.stringify({ ...record, requestCounts: { total: 10, completed: 1, failed: 1 } }));
  const reopened = await LocalBatchStore.open(directory);
  t.deepEqual((await reopened.get(batch.id))?.requestCounts, { total: 10, completed: 2, failed: 2 });
  t.deepEqual((JSON.parse(readFileSync(recordFile, "utf8")) as BatchRecord).requestCounts, { total: 10, completed: 2, failed: 2 });
});

test("local: a record that cannot be read refuses the open, naming its file", async (t) => {
  const { directory, batch } = await runningBatch([]);
  const recordFile = path.join(directory, `${batch.id}.json`);
  const good = readFileSync(recordFile, "utf8");
  writeFileSync(recordFile, good.slice(0, good.length / 2));
  await t.throwsAsync(LocalBatchStore.open(directory), { message: (message) => message.includes(recordFile) && /move it aside/.test(message) });
  // A document that parses but is not this batch's record is refused too.
  writeFileSync(recordFile, JSON.stringify({ ...JSON.parse(good), id: newBatch("x").id }));
  await t.throwsAsync(LocalBatchStore.open(directory), { message: (message) => message.includes(recordFile) });
  writeFileSync(recordFile, JSON.stringify({ ...JSON.parse(good), status: "running" }));
  await t.throwsAsync(LocalBatchStore.open(directory), { message: (message) => message.includes(recordFile) });
});

test("local: a whole results line that is not a result refuses the open, naming the file and line", async (t) => {
  const { directory, batch } = await runningBatch([0, 1]);
  const results = path.join(directory, `${batch.id}.results.jsonl`);
  appendFileSync(results, '{"index":"two"}\n');
  await t.throwsAsync(LocalBatchStore.open(directory), { message: (message) => message.includes(`${results}:3`) });
});

test("local: dropResults deletes the results file", async (t) => {
  const { directory, batch, store } = await runningBatch([0]);
  const results = path.join(directory, `${batch.id}.results.jsonl`);
  t.true(statSync(results).size > 0);
  await store.dropResults(batch.id);
  t.deepEqual(readdirSync(directory), [`${batch.id}.json`]);
  t.deepEqual((await (await LocalBatchStore.open(directory)).get(batch.id))?.requestCounts, { total: 10, completed: 0, failed: 1 });
});

test("redis: two store instances on one Redis see each other's batches, results and claims", async (t) => {
  const prefix = redis.prefix();
  const [one, two] = [new RedisBatchStore(redis.client(), prefix), new RedisBatchStore(redis.client(), prefix)];
  const batch = newBatch(newAgentId(), { status: "in_progress", requestCounts: { total: 2, completed: 0, failed: 0 } });
  await one.create(batch);
  t.deepEqual(await two.get(batch.id), batch);
  t.deepEqual(
    (await two.active()).map((each) => each.id),
    [batch.id],
  );
  const claim = await two.claim(batch.id, HOUR_MS);
  t.truthy(claim);
  t.is(await one.claim(batch.id, HOUR_MS), null);
  t.true(await two.addResult(batch.id, lineResult(1), claim!));
  t.false(await one.addResult(batch.id, lineResult(1), claim!), "the claim's token is checked wherever it is used");
  t.deepEqual(await allResults(one, batch.id), [lineResult(1)]);
  t.deepEqual((await one.get(batch.id))?.requestCounts, { total: 2, completed: 1, failed: 0 });
  await claim!.release();
  const taken = await one.claim(batch.id, HOUR_MS);
  t.truthy(taken);
  await t.throwsAsync(two.addResult(batch.id, lineResult(0), claim!), { instanceOf: BatchClaimLostError });
  // Another prefix is another deployment: it sees none of it.
  const elsewhere = new RedisBatchStore(redis.client(), redis.prefix());
  t.is(await elsewhere.get(batch.id), undefined);
  t.truthy(await elsewhere.claim(batch.id, HOUR_MS));
});

test("redis: dropResults leaves nothing of the results behind", async (t) => {
  const prefix = redis.prefix();
  const client = redis.client();
  const store = new RedisBatchStore(client, prefix);
  const batch = newBatch(newAgentId(), { status: "in_progress" });
  await store.create(batch);
  const claim = await store.claim(batch.id, HOUR_MS);
  await store.addResult(batch.id, lineResult(0), claim!);
  const keysBefore = (await client.keys(`${prefix}*`)).filter((key) => key.includes(batch.id));
  await store.dropResults(batch.id);
  const keysAfter = (await client.keys(`${prefix}*`)).filter((key) => key.includes(batch.id));
  t.true(keysAfter.length < keysBefore.length);
  t.deepEqual(await allResults(store, batch.id), []);
  t.deepEqual(
    keysAfter.filter((key) => /result|recorded/.test(key)),
    [],
  );
});
