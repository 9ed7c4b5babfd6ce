// Storage faults: temp files of uploads cut off by a SIGKILL (they must not wait an hour to be
// cleaned) and a blob file an operator or a damaged disk replaced with a directory (it must get
// an answer and a log line, not a bare 500, and cost nothing else stored).

import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import test from "ava";
import { PARTIAL_DIRECTORY } from "../../src/blobs/fs-stream-driver.js";
import { homePaths } from "../../src/config/paths.js";
import { agentIdOf, answer, BOUNDARY, eventually, MULTIPART, storageApi, testPlan } from "../_storage.js";
import { addKey, makeHome, quietLogger, spawnServe, startTestGateway } from "../helpers/gateway-harness.js";

const MB = 1024 * 1024;

const homeWithRoom = () =>
  makeHome((config) => {
    config.plans = { free: {}, pro: { requestsPerMinute: 100_000 }, max: {}, roomy: testPlan(4 * 1024 * MB) };
  });

function partialFiles(home: string): Array<{ name: string; bytes: number }> {
  const directory = path.join(homePaths(home).blobsDir, PARTIAL_DIRECTORY);
  if (!existsSync(directory)) return [];
  return readdirSync(directory).map((name) => ({ name, bytes: statSync(path.join(directory, name)).size }));
}

function recordStates(home: string): string[] {
  const directory = path.join(homePaths(home).dataDir, "storage", "records");
  return readdirSync(directory).flatMap((agent) =>
    readdirSync(path.join(directory, agent)).map((name) => (JSON.parse(readFileSync(path.join(directory, agent, name), "utf8")) as { state: string }).state),
  );
}

/** A multipart upload that sends its head and `firstBytes` of a larger declared file, then stalls. */
function stalledUpload(url: string, key: string, declaredBytes: number, firstBytes: number): http.ClientRequest {
  const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const tail = `\r\n--${BOUNDARY}--\r\n`;
  const target = new URL(`${url}/v1/storage/upload`);
  const request = http.request({
    host: target.hostname,
    port: target.port,
    method: "POST",
    path: target.pathname,
    headers: { authorization: `Bearer ${key}`, "content-type": MULTIPART, "content-length": String(head.length + declaredBytes + tail.length) },
  });
  request.on("error", () => undefined);
  request.write(head);
  request.write(Buffer.alloc(firstBytes, 7));
  return request;
}

async function download(url: string, key: string, id: string): Promise<Response> {
  return fetch(`${url}/v1/storage/files/${id}`, { headers: { authorization: `Bearer ${key}` } });
}

test("temp files of uploads cut off by SIGKILL are removed by the very next start; stored files stay intact", async (t) => {
  const home = await homeWithRoom();
  const key = await addKey(home, "crash", "roomy");
  const serve = await spawnServe(home);
  const kept = randomBytes(3 * MB);
  const stored = await storageApi(serve, key).upload("kept.bin", kept);
  t.is(stored.status, 201, stored.text);

  const UPLOADS = 8;
  const requests = Array.from({ length: UPLOADS }, () => stalledUpload(serve.url, key, 40 * MB, 4 * MB));
  const allWriting = await eventually(() => {
    const files = partialFiles(home);
    return files.length === UPLOADS && files.every((file) => file.bytes >= 2 * MB);
  }, "every upload writing its temp file");
  t.true(allWriting, JSON.stringify(partialFiles(home)));
  serve.child.kill("SIGKILL");
  await serve.exited;
  for (const request of requests) request.destroy();

  const left = partialFiles(home);
  t.is(left.length, UPLOADS, "the crash left a temp file per upload");
  t.true(left.reduce((sum, file) => sum + file.bytes, 0) >= UPLOADS * 2 * MB);
  t.is(recordStates(home).filter((state) => state === "uploading").length, UPLOADS);

  // Beside them: a temp file of another live gw on this home (this test process stands in for
  // it), and one whose pid is alive but that nobody has written to for two hours (a reused pid).
  const partialDirectory = path.join(homePaths(home).blobsDir, PARTIAL_DIRECTORY);
  const peer = `${process.pid}-${randomBytes(8).toString("hex")}`;
  const reusedPid = `${process.pid}-${randomBytes(8).toString("hex")}`;
  writeFileSync(path.join(partialDirectory, peer), "another gw is writing this");
  writeFileSync(path.join(partialDirectory, reusedPid), "left long ago");
  const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
  utimesSync(path.join(partialDirectory, reusedPid), twoHoursAgo, twoHoursAgo);

  const again = await spawnServe(home);
  try {
    // Listening means the start's housekeeping is done: no waiting, no hour.
    t.deepEqual(
      partialFiles(home).map((file) => file.name),
      [peer],
    );
    t.deepEqual(recordStates(home), ["ready"]);
    const api = storageApi(again, key);
    const listed = await api.list();
    t.deepEqual(
      listed.body.data.map((file: { id: string }) => file.id),
      [stored.body.data.id],
    );
    t.is((await api.quota()).body.data.usedBytes, kept.length);
    const response = await download(again.url, key, stored.body.data.id);
    t.is(response.status, 200);
    t.true(Buffer.from(await response.arrayBuffer()).equals(kept), "the stored file reads back byte for byte");
  } finally {
    again.child.kill("SIGTERM");
    await again.exited;
  }
});

test("a blob replaced by a directory: {message} 500 with a request id and a logged cause; delete and list work; nothing else is lost", async (t) => {
  const home = await homeWithRoom();
  const key = await addKey(home, "damaged", "roomy");
  let gateway = await startTestGateway(home);
  t.teardown(() => gateway.shutdown());
  const api = () => storageApi(gateway, key);
  const neighbour = randomBytes(64 * 1024);
  const damaged = (await api().upload("damaged.txt", "these bytes will be lost", "text/plain")).body.data;
  const intact = (await api().upload("neighbour.bin", neighbour)).body.data;
  const blob = path.join(homePaths(home).blobsDir, agentIdOf(home, "damaged"), damaged.id);
  rmSync(blob);
  mkdirSync(blob);
  writeFileSync(path.join(blob, "operator-notes.txt"), "not gw's");

  const listed = await api().list();
  t.is(listed.status, 200);
  t.deepEqual(
    listed.body.data.map((file: { id: string }) => file.id),
    [intact.id, damaged.id],
  );

  const assertUnreadable = async (response: Response, label: string) => {
    const result = await answer(response);
    t.is(result.status, 500, `${label}: ${result.text}`);
    t.regex(result.headers.get("content-type") ?? "", /^application\/json/, label);
    t.regex(result.headers.get("x-request-id") ?? "", /^req_/, label);
    t.deepEqual(Object.keys(result.body ?? {}), ["message"], label);
    t.regex(String(result.body?.message), /stored bytes of this file cannot be read/i, label);
  };
  const loggedBefore = quietLogger.lines.length;
  // Through the API (its 302, followed) and through a signed link asked for separately.
  await assertUnreadable(await download(gateway.url, key, damaged.id), "API download");
  const link = await api().url(damaged.id);
  t.is(link.status, 200);
  await assertUnreadable(await fetch(link.body.data.url), "signed link");
  const logged = quietLogger.lines.slice(loggedBefore).filter((line) => line.startsWith("error") && line.includes(blob));
  t.is(logged.length, 2, quietLogger.lines.slice(loggedBefore).join("\n"));
  t.regex(logged[0]!, /not a regular file|EISDIR/);

  // The neighbour is untouched.
  const neighbourResponse = await download(gateway.url, key, intact.id);
  t.is(neighbourResponse.status, 200);
  t.true(Buffer.from(await neighbourResponse.arrayBuffer()).equals(neighbour));

  // Delete forgets the file; what stands in the blob's place is not gw's to remove, and is said so.
  const warnedBefore = quietLogger.lines.length;
  const removed = await api().remove(damaged.id);
  t.is(removed.status, 200, removed.text);
  t.true(
    quietLogger.lines.slice(warnedBefore).some((line) => line.startsWith("warn") && line.includes(damaged.id)),
    quietLogger.lines.slice(warnedBefore).join("\n"),
  );
  t.is(readFileSync(path.join(blob, "operator-notes.txt"), "utf8"), "not gw's");
  t.is((await fetch(link.body.data.url)).status, 404);
  t.deepEqual(
    (await api().list()).body.data.map((file: { id: string }) => file.id),
    [intact.id],
  );

  // A restart with the directory still there starts, and keeps everything else.
  await gateway.shutdown();
  gateway = await startTestGateway(home);
  const afterRestart = await download(gateway.url, key, intact.id);
  t.is(afterRestart.status, 200);
  t.true(Buffer.from(await afterRestart.arrayBuffer()).equals(neighbour));
  t.is((await api().quota()).body.data.usedBytes, neighbour.length);
  t.true(existsSync(path.join(blob, "operator-notes.txt")));
});
