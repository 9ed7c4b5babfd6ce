// Storage limits against a real gw: 50 MB per file (streamed sparse files, never in memory),
// plan quotas with the spec's message, parallel uploads racing for the last bytes, operations per
// period, and uploads cut off halfway leaving no bytes, record, reservation or counted operation.

import http from "node:http";
import test from "ava";
import { GwApiError } from "../src/client/gw-api-error.js";
import { GwClient } from "../src/client/gw-client.js";
import { agentIdOf, eventually, MULTIPART, type StorageApi, sparseFile, storageApi, storedPaths, streamedFile, testPlan } from "./_storage.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const KB = 1024;
const MB = 1024 * KB;

let gateway: TestGateway;
let home: string;
const keys: Record<string, string> = {};
const api = (agent: string): StorageApi => storageApi(gateway, keys[agent]!);

test.before(async () => {
  home = await makeHome((config) => {
    config.plans = {
      free: {},
      pro: { requestsPerMinute: 100_000 },
      max: {},
      tiny: testPlan(1 * MB),
      race: testPlan(1 * MB),
      ops: testPlan(100 * MB, 3),
      abort: testPlan(3 * MB, 1),
      abortput: testPlan(3 * MB, 2),
    };
  });
  gateway = await startTestGateway(home);
  for (const [agent, plan] of [
    ["big", "pro"],
    ["declared", "pro"],
    ["tiny", "tiny"],
    ["race", "race"],
    ["ops", "ops"],
    ["abort", "abort"],
    ["abortput", "abortput"],
  ]) {
    keys[agent!] = await addKey(home, agent!, plan);
  }
});

test.after.always(async () => {
  await gateway?.shutdown();
});

test.after("no request failed inside the gateway", (t) => {
  t.deepEqual(
    quietLogger.lines.filter((line) => line.startsWith("error")),
    [],
  );
});

test("a file of exactly 50 MB is stored; 50 MB + 1 byte is 413 {message} and leaves nothing", async (t) => {
  const client = new GwClient({ baseUrl: gateway.url, apiKey: keys.big! });
  const exact = sparseFile(50 * MB);
  const stored = await client.uploadFile(streamedFile(exact, 50 * MB));
  t.is(stored.data.sizeBytes, 50 * MB);

  const over = sparseFile(50 * MB + 1);
  const error = await t.throwsAsync(client.uploadFile(streamedFile(over, 50 * MB + 1)), { instanceOf: GwApiError });
  t.is(error!.status, 413);
  t.deepEqual(error!.body, { message: error!.message });
  t.regex(error!.message, /larger than the 50 MB limit per file \(52428800 bytes\)/);
  t.is((await client.listFiles()).pagination.total, 1);
  t.is((await client.storageQuota()).data.usedBytes, 50 * MB);
  const agentId = agentIdOf(home, "big");
  t.deepEqual(
    storedPaths(home).blobs.filter((file) => file.startsWith(agentId) || file.startsWith(".partial")),
    [`${agentId}/${stored.data.id}`],
  );

  // The stored 50 MB come back whole through the signed link.
  const download = await fetch((await client.fileUrl(stored.data.id)).data.url);
  t.is(download.headers.get("content-length"), String(50 * MB));
  let received = 0;
  for await (const chunk of download.body!) received += chunk.byteLength;
  t.is(received, 50 * MB);
});

test("a body declared far over the limit is refused before it is read", async (t) => {
  const { hostname, port } = new URL(gateway.url);
  const status = await new Promise<number>((resolve, reject) => {
    const request = http.request({
      host: hostname,
      port,
      method: "POST",
      path: "/v1/storage/upload",
      headers: { authorization: `Bearer ${keys.declared}`, "content-type": MULTIPART, "content-length": String(200 * MB) },
    });
    request.on("response", (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
      request.destroy();
    });
    request.on("error", reject);
    request.flushHeaders();
    request.write("--gwtestboundary\r\n");
  });
  t.is(status, 413);
  t.is((await api("declared").quota()).body.data.usedBytes, 0);
});

test("over the plan's quota: 413 {message} stating used, limit and file size", async (t) => {
  const tiny = api("tiny");
  t.is((await tiny.upload("first.bin", new Uint8Array(600 * KB))).status, 201);
  const over = await tiny.upload("second.bin", new Uint8Array(600 * KB));
  t.is(over.status, 413);
  t.deepEqual(Object.keys(over.body), ["message"]);
  t.regex(over.body.message, /quota exceeded/i);
  t.regex(over.body.message, /600 KB used/);
  t.regex(over.body.message, /of 1 MB/);
  t.regex(over.body.message, /this file is 600 KB/);
  t.regex(over.body.message, /614400 of 1048576 bytes used, file 614400 bytes/);
  const presigned = await tiny.presign({ filename: "third.bin", contentType: "application/octet-stream", sizeBytes: 500 * KB });
  t.is(presigned.status, 413);
  t.regex(presigned.body.message, /600 KB used of 1 MB, and this file is 500 KB/);
  // What still fits, fits exactly.
  t.is((await tiny.upload("rest.bin", new Uint8Array(424 * KB))).status, 201);
  t.is((await tiny.quota()).body.data.usedBytes, 1 * MB);
  t.is((await tiny.upload("one-byte.bin", new Uint8Array(1))).status, 413);
});

test("parallel uploads reserve space as they go: together they never pass the quota", async (t) => {
  const race = api("race");
  const results = await Promise.all(Array.from({ length: 6 }, (_, index) => race.upload(`racer-${index}.bin`, new Uint8Array(300 * KB).fill(index))));
  const statuses = results.map((result) => result.status);
  const stored = results.filter((result) => result.status === 201);
  t.true(
    statuses.every((status) => status === 201 || status === 413),
    statuses.join(","),
  );
  t.true(stored.length >= 1 && stored.length <= 3, statuses.join(","));
  const used = (await race.quota()).body.data.usedBytes;
  t.is(used, stored.length * 300 * KB);
  t.true(used <= 1 * MB);
  t.is((await race.list()).body.pagination.total, stored.length);
  // No reservation is left behind: the rest of the quota fits exactly, one more byte does not.
  t.is((await race.upload("rest.bin", new Uint8Array(1 * MB - used))).status, 201);
  t.is((await race.upload("one-more.bin", new Uint8Array(1))).status, 413);
  const agentId = agentIdOf(home, "race");
  t.is(storedPaths(home).blobs.filter((file) => file.startsWith(agentId)).length, stored.length + 1);
});

test("operations per period: upload, presigned upload and delete count; past the limit 429 {message}", async (t) => {
  const ops = api("ops");
  const results = await Promise.all(Array.from({ length: 5 }, (_, index) => ops.upload(`op-${index}.txt`, `op ${index}`, "text/plain")));
  const statuses = results.map((result) => result.status).sort();
  t.deepEqual(statuses, [201, 201, 201, 429, 429]);
  const refused = results.find((result) => result.status === 429)!;
  t.deepEqual(Object.keys(refused.body), ["message"]);
  t.regex(refused.body.message, /Storage operation limit reached: 3 uploads, presigned uploads and deletes per period \(\d{4}-\d{2}\)/);
  t.true(Number(refused.headers.get("retry-after")) > 0);
  const stored = results.find((result) => result.status === 201)!.body.data;
  t.is((await ops.remove(stored.id)).status, 429);
  t.is((await ops.presign({ filename: "p", contentType: "text/plain", sizeBytes: 1 })).status, 429);
  // Reading is not an operation.
  t.is((await ops.list()).status, 200);
  t.is((await ops.url(stored.id)).status, 200);
  t.is((await ops.quota()).status, 200);
});

test.serial("a multipart upload cut off halfway leaves no bytes, no record, no reservation and no counted operation", async (t) => {
  const agentId = agentIdOf(home, "abort");
  const { hostname, port } = new URL(gateway.url);
  const head = `--gwtestboundary\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const request = http.request({
    host: hostname,
    port,
    method: "POST",
    path: "/v1/storage/upload",
    headers: { authorization: `Bearer ${keys.abort}`, "content-type": MULTIPART, "content-length": String(head.length + 2 * MB + 40) },
  });
  request.on("error", () => undefined);
  request.write(head);
  request.write(Buffer.alloc(1 * MB, 1));
  // Halfway: the bytes are on their way to a temp file.
  t.true(
    await eventually(
      () => storedPaths(home).blobs.some((file) => file.startsWith(".partial/")) && storedPaths(home).records.some((file) => file.startsWith(agentId)),
    ),
  );
  request.destroy();

  t.true(
    await eventually(
      () =>
        storedPaths(home).blobs.every((file) => !file.startsWith(".partial/") && !file.startsWith(agentId)) &&
        storedPaths(home).records.every((file) => !file.startsWith(agentId)),
    ),
  );
  const abort = api("abort");
  t.is((await abort.list()).body.pagination.total, 0);
  t.is((await abort.quota()).body.data.usedBytes, 0);
  // The whole 3 MB quota and the plan's single operation are still there.
  const full = await abort.upload("full.bin", new Uint8Array(3 * MB));
  t.is(full.status, 201, full.text);
  t.is((await abort.upload("more.bin", new Uint8Array(1))).status, 429);
});

test.serial("a presigned PUT cut off halfway stores nothing; the link still takes a complete upload", async (t) => {
  const client = api("abortput");
  const agentId = agentIdOf(home, "abortput");
  const presigned = (await client.presign({ filename: "put.bin", contentType: "application/octet-stream", sizeBytes: 2 * MB })).body.data;
  const target = new URL(presigned.uploadUrl);
  const request = http.request({
    host: target.hostname,
    port: target.port,
    method: "PUT",
    path: `${target.pathname}${target.search}`,
    headers: { "content-type": "application/octet-stream", "content-length": String(2 * MB) },
  });
  request.on("error", () => undefined);
  request.write(Buffer.alloc(1 * MB, 2));
  t.true(await eventually(() => storedPaths(home).blobs.some((file) => file.startsWith(".partial/"))));
  request.destroy();
  t.true(await eventually(() => storedPaths(home).blobs.every((file) => !file.startsWith(".partial/") && !file.startsWith(agentId))));
  t.is((await client.url(presigned.id)).status, 409);
  t.is((await client.quota()).body.data.usedBytes, 2 * MB);
  const retried = await fetch(presigned.uploadUrl, {
    method: "PUT",
    headers: { "content-type": "application/octet-stream" },
    body: new Uint8Array(2 * MB).fill(3),
  });
  t.is(retried.status, 200);
  const bytes = new Uint8Array(await (await fetch((await client.url(presigned.id)).body.data.url)).arrayBuffer());
  t.is(bytes.length, 2 * MB);
  t.is(bytes[2 * MB - 1], 3);
});
