// Several gw servers sharing one Redis and one S3 bucket (s3rver, in this process), as a
// deployment behind a load balancer runs them: each has its own home, they share keys, the
// storage index and quotas through a real redis-server, the bytes through the bucket, and the
// links through `storage.signingSecret`. A file stored through one instance is listed, downloaded
// (API and signed link) and deleted through any other; its bytes count once against the quota,
// and uploads racing through every instance never pass the quota or the operations limit.
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import test from "ava";
import { blobKeyOf } from "../src/gateway/storage/storage-context.js";
import { newFileId } from "../src/gateway/storage/stored-file.js";
import type { FileRecord } from "../src/store/file-records.js";
import { createKey } from "../src/store/provisioning.js";
import { RedisFileState } from "../src/store/redis-file-state.js";
import { eventually, type StorageApi, storageApi, testPlan } from "./_storage.js";
import { makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { startS3, type TestS3 } from "./helpers/s3-server.js";

const INSTANCES = 3;
const KB = 1024;
const MB = 1024 * KB;
const BUCKET = "gw-shared";
const SIGNING_SECRET = "shared-signing-secret-of-the-deployment-0123456789";

let redis: TestRedis;
let bucket: TestS3;
let instances: TestGateway[] = [];

test.before(async () => {
  redis = await startRedis();
  bucket = await startS3([BUCKET]);
  const { port } = bucket;
  const state = { driver: "redis" as const, url: redis.socket, prefix: "st:" };
  for (let index = 0; index < INSTANCES; index += 1) {
    const home = await makeHome((config) => {
      config.plans = { free: {}, roomy: testPlan(100 * MB), small: testPlan(1 * MB), few: testPlan(100 * MB, 3) };
      config.storage = {
        driver: "s3",
        options: {
          endpoint: `http://127.0.0.1:${port}`,
          bucket: BUCKET,
          region: "us-east-1",
          accessKeyId: "S3RVER",
          secretAccessKey: "S3RVER",
          prefix: "shared",
        },
        signingSecret: SIGNING_SECRET,
      };
    });
    instances.push(await startTestGateway(home, { state }));
  }
});

test.after.always(async () => {
  await Promise.all(instances.map((instance) => instance.shutdown()));
  instances = [];
  await bucket?.close();
  await redis?.stop();
});

/** One key of a new agent on `plan`, and the storage API through every instance. */
async function agentApis(agent: string, plan: string): Promise<StorageApi[]> {
  const { key } = await createKey(instances[0]!.gateway.store, agent, plan, "free");
  return instances.map((instance) => storageApi(instance, key));
}

/** The same signed link, served by another instance (the link names a path, not a host). */
function through(instance: TestGateway, link: string): string {
  const url = new URL(link);
  return `${instance.url}${url.pathname}${url.search}`;
}

async function usedEverywhere(apis: StorageApi[]): Promise<number[]> {
  return Promise.all(apis.map(async (api) => (await api.quota()).body.data.usedBytes as number));
}

/** Scripts Redis has run so far (every grant, save and operation is one). */
async function scriptsRun(): Promise<number> {
  const stats = await redis.client().info("commandstats");
  let calls = 0;
  for (const match of stats.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+)/gm)) calls += Number(match[1]);
  return calls;
}

// Serial: ava runs it before the others, so the scripts counted are this upload's.
test.serial("a 20 MB upload asks Redis for space in steps, not per chunk: a handful of scripts, not hundreds", async (t) => {
  const apis = await agentApis("stepper", "roomy");
  await apis[1]!.quota();
  const before = await scriptsRun();
  const bytes = randomBytes(20 * MB);
  const uploaded = await apis[1]!.upload("big.bin", bytes);
  t.is(uploaded.status, 201);
  const scripts = (await scriptsRun()) - before;
  // The rate limit, the operation taken and committed, the intent record, 5 grants of 4 MiB, the save.
  t.true(scripts <= 12, `${scripts} scripts`);
  t.deepEqual(await usedEverywhere(apis), [20 * MB, 20 * MB, 20 * MB]);
  const link = (await apis[0]!.url(uploaded.body.data.id)).body.data.url as string;
  t.true(Buffer.from(await (await fetch(through(instances[2]!, link))).arrayBuffer()).equals(bytes));
});

test("a file stored through one instance is listed, downloaded and deleted through the others, and counted once", async (t) => {
  const apis = await agentApis("sharer", "roomy");
  const bytes = randomBytes(200 * KB);
  const uploaded = await apis[0]!.upload("shared.bin", bytes);
  t.is(uploaded.status, 201);
  const file = uploaded.body.data;

  for (const api of apis) {
    const list = (await api.list()).body;
    t.is(list.pagination.total, 1);
    t.is(list.data[0].id, file.id);
  }
  t.deepEqual(await usedEverywhere(apis), [200 * KB, 200 * KB, 200 * KB]);

  // The API's redirect on instance 1, its signed link served by instance 2; a /url link by instance 0.
  const redirect = await apis[1]!.redirect(file.id);
  t.is(redirect.status, 302);
  const download = await fetch(through(instances[2]!, redirect.headers.get("location") ?? ""));
  t.is(download.status, 200);
  t.deepEqual(Buffer.from(await download.arrayBuffer()), bytes);
  const link = (await apis[2]!.url(file.id)).body.data.url as string;
  const again = await fetch(through(instances[0]!, link));
  t.deepEqual(Buffer.from(await again.arrayBuffer()), bytes);

  // A presigned upload signed by instance 1 takes its bytes through instance 2; instance 0 serves them.
  const later = randomBytes(50 * KB);
  const presigned = await apis[1]!.presign({ filename: "later.bin", contentType: "application/octet-stream", sizeBytes: later.length });
  t.is(presigned.status, 200);
  t.deepEqual(await usedEverywhere(apis), [250 * KB, 250 * KB, 250 * KB]);
  const put = await fetch(through(instances[2]!, presigned.body.data.uploadUrl), {
    method: "PUT",
    body: later,
    headers: { "content-type": "application/octet-stream" },
  });
  t.is(put.status, 200);
  // The link worked once, on every instance.
  const reused = await fetch(through(instances[0]!, presigned.body.data.uploadUrl), {
    method: "PUT",
    body: later,
    headers: { "content-type": "application/octet-stream" },
  });
  t.is(reused.status, 403);
  const laterLink = (await apis[0]!.url(presigned.body.data.id)).body.data.url as string;
  t.deepEqual(Buffer.from(await (await fetch(laterLink)).arrayBuffer()), later);
  t.deepEqual(await usedEverywhere(apis), [250 * KB, 250 * KB, 250 * KB]);

  // Deleted through instance 2: gone on every instance, links included, and its bytes no longer counted.
  t.is((await apis[2]!.remove(file.id)).status, 200);
  t.is((await apis[0]!.remove(file.id)).status, 404);
  for (const api of apis) {
    t.is((await api.redirect(file.id)).status, 404);
    t.deepEqual(
      (await api.list()).body.data.map((entry: { id: string }) => entry.id),
      [presigned.body.data.id],
    );
  }
  t.is((await fetch(through(instances[1]!, link))).status, 404);
  t.deepEqual(await usedEverywhere(apis), [50 * KB, 50 * KB, 50 * KB]);
});

test("uploads racing through every instance never pass the quota together; what is left fits exactly", async (t) => {
  const apis = await agentApis("racer", "small");
  const results = await Promise.all(
    Array.from({ length: 9 }, (_, index) => apis[index % INSTANCES]!.upload(`racer-${index}.bin`, new Uint8Array(300 * KB).fill(index))),
  );
  const statuses = results.map((result) => result.status);
  t.true(
    statuses.every((status) => status === 201 || status === 413),
    statuses.join(","),
  );
  const stored = statuses.filter((status) => status === 201).length;
  t.true(stored >= 1 && stored <= 3, statuses.join(","));
  const used = stored * 300 * KB;
  t.deepEqual(await usedEverywhere(apis), [used, used, used]);
  for (const api of apis) t.is((await api.list()).body.pagination.total, stored);
  // No grant is left behind on any instance: the rest fits exactly, one more byte does not.
  t.is((await apis[1]!.upload("rest.bin", new Uint8Array(1 * MB - used))).status, 201);
  t.is((await apis[2]!.upload("one-more.bin", new Uint8Array(1))).status, 413);
  t.deepEqual(await usedEverywhere(apis), [MB, MB, MB]);
});

test("operations racing through every instance never pass the period's limit", async (t) => {
  const apis = await agentApis("counter", "few");
  const results = await Promise.all(Array.from({ length: 8 }, (_, index) => apis[index % INSTANCES]!.upload(`op-${index}.txt`, `op ${index}`)));
  const statuses = results.map((result) => result.status).sort();
  t.deepEqual(statuses, [201, 201, 201, 429, 429, 429, 429, 429]);
  for (const api of apis) {
    const quota = await api.quota();
    t.is(quota.headers.get("x-service-storage-operations-used"), "3", [...quota.headers.keys()].join(","));
    t.is((await api.list()).body.pagination.total, 3);
  }
});

test.serial("Redis hung: a signed link (no key, no rate limit: only the file state) is 503 state_unavailable, not a 404; it works again after", async (t) => {
  const apis = await agentApis("outage", "roomy");
  const uploaded = await apis[0]!.upload("kept.txt", "kept through the outage");
  const link = (await apis[0]!.url(uploaded.body.data.id)).body.data.url as string;
  redis.pause();
  let refused: Response;
  try {
    refused = await fetch(through(instances[1]!, link));
  } finally {
    redis.resume();
  }
  t.is(refused.status, 503);
  const text = await refused.text();
  t.regex(text, /state store could not serve this request \(Redis files\.find: no answer in time\)/);
  t.notRegex(text, /sock|redis:\/\//);
  const served = await eventually(async () => fetch(through(instances[1]!, link)), {
    what: "the link served again",
    until: (response) => response.status === 200,
  });
  t.is(await served.text(), "kept through the outage");
});

test.serial("an upload left half-done by an instance that died is removed by another's sweep, record and bytes; a recent one is left alone", async (t) => {
  // What an instance that died mid-upload leaves: the intent record in Redis, bytes in the bucket.
  const state = new RedisFileState(redis.client(), "st:");
  const intent = (agentId: string): FileRecord => ({
    id: newFileId(Date.now()),
    agentId,
    filename: "cut-short.bin",
    contentType: "application/octet-stream",
    sizeBytes: 0,
    createdAt: new Date().toISOString(),
    state: "uploading",
  });
  const abandoned = intent("agent-died-mid-upload");
  const recent = intent("agent-uploading-now");
  await state.save(abandoned);
  await state.save(recent);
  const blobs = instances[0]!.gateway.storage.blobs;
  await blobs.write(blobKeyOf(abandoned), Readable.from([randomBytes(64 * KB)]));
  // Its upload began two hours ago, on Redis's clock.
  const [seconds] = await redis.client().time();
  await redis.client().zadd("st:files:uploading", "XX", String((Number(seconds) - 7200) * 1000), abandoned.id);

  t.is(await instances[1]!.gateway.storage.sweepAbandonedUploads(), 1);
  t.is(await redis.client().get(`st:file:${abandoned.id}`), null, "the record is gone");
  t.is(await redis.client().zscore("st:files:uploading", abandoned.id), null);
  t.false(await blobs.has(blobKeyOf(abandoned)), "its bytes are gone");
  t.not(await redis.client().zscore("st:files:uploading", recent.id), null, "an upload begun just now is left alone");
  t.is(await instances[2]!.gateway.storage.sweepAbandonedUploads(), 0, "nothing is removed twice");
  await state.remove(recent);
});
