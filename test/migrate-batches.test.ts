// `gw migrate` carries batches to Redis: an ended batch as it is, a running one with the results
// of the lines it answered (and its counts rebuilt from them), so it resumes on the instances
// where it stopped; a batch already in Redis is left alone, so a second run changes nothing.
import test from "ava";
import { copyBatches } from "../src/cli/migrate/copy-records.js";
import { LocalBatchStore } from "../src/store/local-batches.js";
import { RedisBatchStore } from "../src/store/redis-batches.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";
import { allResults, lineResult, newAgentId, newBatch } from "./state/batch-records.conformance.js";

let redis: TestRedis;

test.before(async () => {
  redis = await startRedis();
});

test.after.always(async () => {
  await redis?.stop();
});

test("ended and running batches are copied, the running one with its results and counts; a second run copies nothing again", async (t) => {
  const local = await LocalBatchStore.open(tempDir("gw-migrate-batches-"));
  const agent = newAgentId();
  const ended = newBatch(agent, { status: "completed", completedAt: 1_800_000_100, outputFileId: "file_01ARZ3NDEKTSV4RRFFQ69G5FAV" });
  const running = newBatch(agent, { status: "in_progress" });
  await local.create(ended);
  await local.create(running);
  const claim = await local.claim(running.id, 60_000);
  if (!claim) throw new Error("no claim");
  await local.addResult(running.id, lineResult(0, true), claim);
  await local.addResult(running.id, lineResult(2, false), claim);
  await claim.release();

  const target = new RedisBatchStore(redis.client(), "migrate:");
  t.deepEqual(await copyBatches(local, target), { batches: 2, running: 1 });
  t.deepEqual(await target.get(ended.id), ended);
  const copied = await target.get(running.id);
  t.deepEqual(copied?.requestCounts, { ...running.requestCounts, completed: 1, failed: 1 });
  t.deepEqual(
    (await allResults(target, running.id)).map((result) => [result.index, result.ok]),
    [
      [0, true],
      [2, false],
    ],
  );
  t.deepEqual(
    (await target.active()).map((batch) => batch.id),
    [running.id],
  );

  t.deepEqual(await copyBatches(local, target), { batches: 2, running: 0 });
  t.is((await allResults(target, running.id)).length, 2, "nothing recorded twice");
});
