// `storage.driver: "s3"` against a real S3-compatible server (s3rver, in this process, on port 0,
// its own temp folder), through gw's public storage API: the bytes land in the bucket under the
// configured prefix and come back byte-for-byte; a 50 MB upload streams as a multipart upload
// (parts in the bucket while the client is still sending, memory not growing by the file size);
// an upload cut short leaves no object and aborts its multipart upload; a store that refuses the
// credentials or cannot be reached is answered with the storage API's `{message}`, no secret in
// it or in the log. s3rver checks the access key id but not SigV4 signatures.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import { Readable } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import test from "ava";
import { createBlobStore } from "../src/blobs/create-blob-store.js";
import { agentIdOf, eventually, storageApi } from "./_storage.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { startS3, type TestS3 } from "./helpers/s3-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

const BUCKET = "gw-blobs";
const PREFIX = "tenant-a";
const MiB = 1024 * 1024;
const FILE_LIMIT = 50 * MiB;
/** The secret key as the config holds it; s3rver does not check it, so any value is accepted. */
const SECRET = "s3-secret-never-shown-9f8e7d";

// Read from the environment through the config's `${NAME}` references, as an operator would.
process.env.GW_TEST_S3_KEY_ID = "S3RVER";
process.env.GW_TEST_S3_SECRET = SECRET;

interface Bucket {
  server: TestS3;
  directory: string;
  endpoint: string;
  /** Every request s3rver received: method and URL. */
  requests: Array<{ method: string; url: string }>;
}

async function startBucket(): Promise<Bucket> {
  const server = await startS3([BUCKET]);
  const requests: Bucket["requests"] = [];
  server.httpServer.on("request", (request: http.IncomingMessage) => requests.push({ method: request.method ?? "", url: request.url ?? "" }));
  return { server, directory: server.directory, endpoint: server.endpoint, requests };
}

function s3Options(endpoint: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    endpoint,
    bucket: BUCKET,
    region: "us-east-1",
    accessKeyId: "${GW_TEST_S3_KEY_ID}",
    secretAccessKey: "${GW_TEST_S3_SECRET}",
    prefix: PREFIX,
    ...extra,
  };
}

async function s3Home(options: Record<string, unknown>): Promise<string> {
  return makeHome((config) => {
    config.storage = { driver: "s3", options };
  });
}

/** Where s3rver keeps an object's bytes (its filesystem store: `<key>._S3rver_object`). */
function objectFile(bucket: Bucket, objectKey: string): string {
  return path.join(bucket.directory, BUCKET, `${objectKey}._S3rver_object`);
}

/** The part files of multipart uploads in progress, by upload id. */
function partsInProgress(bucket: Bucket): Record<string, string[]> {
  const uploads = path.join(bucket.directory, BUCKET, "._S3rver_uploads");
  if (!existsSync(uploads)) return {};
  return Object.fromEntries(
    readdirSync(uploads).map((id) => [
      id,
      readdirSync(path.join(uploads, id))
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(a) - Number(b)),
    ]),
  );
}

/** Every object key in the bucket, from s3rver's folder. */
function objectKeys(bucket: Bucket): string[] {
  const root = path.join(bucket.directory, BUCKET);
  const found: string[] = [];
  const walk = (directory: string, prefix: string) => {
    if (!existsSync(directory)) return;
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      if (entry.isDirectory() && !entry.name.startsWith("._S3rver")) walk(path.join(directory, entry.name), `${prefix}${entry.name}/`);
      else if (entry.name.endsWith("._S3rver_object")) found.push(prefix + entry.name.replace(/\._S3rver_object$/, ""));
    }
  };
  walk(root, "");
  return found.sort();
}

let bucket: Bucket;
let home: string;
let gateway: TestGateway;
const keys: Record<string, string> = {};

test.before(async () => {
  bucket = await startBucket();
  // s3rver runs in this process, which the 50 MB test below also stops for a full garbage
  // collection every sample: on a loaded machine assembling that object has taken over the
  // default 60 s deadline. What these tests check is streaming and bytes, not that deadline.
  home = await s3Home(s3Options(bucket.endpoint, { timeoutMs: 600_000 }));
  gateway = await startTestGateway(home);
  for (const agent of ["basic", "big", "cut", "direct"]) keys[agent] = await addKey(home, agent, "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await bucket?.server.close();
});

/** A multipart form upload whose file bytes the test writes when it wants: `send` then `finish`. */
function streamingUpload(target: TestGateway, key: string, filename: string) {
  const boundary = "gwS3TestBoundary";
  const request = http.request(`${target.url}/v1/storage/upload`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": `multipart/form-data; boundary=${boundary}` },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.once("response", (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        body += chunk;
      });
      response.once("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.once("error", reject);
  });
  let answered = false;
  answer.then(
    () => {
      answered = true;
    },
    () => {
      answered = true;
    },
  );
  request.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const hash = createHash("sha256");
  let sent = 0;
  const base = randomBytes(MiB);
  return {
    /** Write file bytes until `bytes` have gone, a MiB at a time, honouring backpressure. */
    async sendUntil(bytes: number) {
      while (sent < bytes && !answered && !request.destroyed) {
        const chunk = Buffer.from(base.subarray(0, Math.min(MiB, bytes - sent)));
        chunk.writeUInt32BE(sent / MiB, 0);
        hash.update(chunk);
        sent += chunk.length;
        // An answer before the end (an error) or a closed connection stops the sending.
        if (!request.write(chunk)) await Promise.race([new Promise((resolve) => request.once("drain", resolve)), answer.catch(() => undefined)]);
      }
    },
    finish() {
      request.end(`\r\n--${boundary}--\r\n`);
      return answer;
    },
    cut() {
      request.destroy();
    },
    /** The hash of every byte sent (call once sending is over). */
    sha256: (() => {
      let digest: string | undefined;
      return () => {
        digest ??= hash.digest("hex");
        return digest;
      };
    })(),
  };
}

function sha256OfFile(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

/**
 * The bytes of live buffers in this process (gateway, s3rver and client alike), after a full
 * collection: garbage waiting for the collector says nothing about what the upload holds.
 */
function liveBufferBytes(): number {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
  return process.memoryUsage().arrayBuffers;
}

// Serial, so it runs alone (ava runs serial tests before the concurrent ones): it measures memory.
test.serial("a 50 MB upload streams: parts reach the bucket while the client sends, memory does not grow by the file size, one object assembled", async (t) => {
  const big = storageApi(gateway, keys.big!);
  // Warm the paths (multipart included), so the measurement is not paying for first use.
  const warm = streamingUpload(gateway, keys.big!, "warm.bin");
  await warm.sendUntil(20 * MiB);
  const warmed = await warm.finish();
  t.is(warmed.status, 201, warmed.body);
  t.is((await big.remove(JSON.parse(warmed.body).data.id)).status, 200);

  const before = liveBufferBytes();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, liveBufferBytes());
  }, 50);
  const requestsBefore = bucket.requests.length;
  const upload = streamingUpload(gateway, keys.big!, "film.bin");
  try {
    // 20 MiB sent: two 8 MiB parts are in the bucket's upload, no object yet.
    await upload.sendUntil(20 * MiB);
    const parts = await eventually(
      () => Object.values(partsInProgress(bucket)).find((names) => names.length >= 2),
      "two parts uploaded while the client sends",
    );
    t.deepEqual(parts!.slice(0, 2), ["1", "2"]);
    const agentId = agentIdOf(home, "big");
    t.deepEqual(
      objectKeys(bucket).filter((key) => key.startsWith(`${PREFIX}/${agentId}/`)),
      [],
    );
    await upload.sendUntil(FILE_LIMIT);
    const answer = await upload.finish();
    t.is(answer.status, 201, answer.body);
    const file = JSON.parse(answer.body).data;
    t.is(file.sizeBytes, FILE_LIMIT);
    clearInterval(sampler);
    const growth = peak - before;
    t.true(growth < FILE_LIMIT, `live buffers grew by ${(growth / MiB).toFixed(1)} MiB while a ${FILE_LIMIT / MiB} MiB file was uploaded`);
    t.log(`live buffers grew by ${(growth / MiB).toFixed(1)} MiB at most during the upload`);

    // One object, assembled from 7 parts (6 × 8 MiB + 2 MiB), byte-for-byte; no upload left open.
    const objectKey = `${PREFIX}/${agentId}/${file.id}`;
    t.deepEqual(objectKeys(bucket), [objectKey]);
    t.is(sha256OfFile(objectFile(bucket, objectKey)), upload.sha256());
    t.deepEqual(partsInProgress(bucket), {});
    const calls = bucket.requests.slice(requestsBefore).map((request) => `${request.method} ${request.url.replace(/uploadId=[^&]+/, "uploadId=ID")}`);
    t.deepEqual(
      calls.filter((call) => call.includes(file.id)),
      [
        `POST /${BUCKET}/${objectKey}?uploads=`,
        ...[1, 2, 3, 4, 5, 6, 7].map((part) => `PUT /${BUCKET}/${objectKey}?partNumber=${part}&uploadId=ID`),
        `POST /${BUCKET}/${objectKey}?uploadId=ID`,
      ],
    );

    // Downloaded through its signed link: the same bytes.
    const link = (await big.url(file.id)).body.data.url;
    const download = await fetch(link);
    t.is(download.status, 200);
    t.is(download.headers.get("content-length"), String(FILE_LIMIT));
    const downloaded = createHash("sha256");
    for await (const chunk of download.body!) downloaded.update(chunk);
    t.is(downloaded.digest("hex"), upload.sha256());
    t.like((await big.quota()).body.data, { usedBytes: FILE_LIMIT });
  } finally {
    clearInterval(sampler);
  }
});

test("upload, list, download byte-for-byte and delete: the object is in the bucket under the prefix, the quota counts it once", async (t) => {
  const basic = storageApi(gateway, keys.basic!);
  const bytes = randomBytes(300 * 1024);
  const uploaded = await basic.upload("photo.bin", bytes, "image/png");
  t.is(uploaded.status, 201, uploaded.text);
  const file = uploaded.body.data;
  t.like(file, { filename: "photo.bin", contentType: "image/png", sizeBytes: bytes.length });

  // Under `<prefix>/<agent id>/<file id>`, one PutObject (no multipart below 8 MiB).
  const objectKey = `${PREFIX}/${agentIdOf(home, "basic")}/${file.id}`;
  t.true(existsSync(objectFile(bucket, objectKey)), objectKey);
  t.deepEqual(readFileSync(objectFile(bucket, objectKey)), bytes);
  t.deepEqual(
    bucket.requests.filter((request) => request.url.includes(file.id)).map((request) => request.method),
    ["PUT"],
  );

  const listed = await basic.list();
  t.deepEqual(listed.body.data, [file]);
  t.deepEqual(listed.body.pagination, { page: 1, limit: 50, total: 1 });
  t.like((await basic.quota()).body.data, { usedBytes: bytes.length });

  const redirect = await basic.redirect(file.id);
  t.is(redirect.status, 302);
  const download = await fetch(redirect.headers.get("location")!);
  t.is(download.status, 200);
  t.is(download.headers.get("content-type"), "image/png");
  t.is(download.headers.get("content-length"), String(bytes.length));
  t.deepEqual(Buffer.from(await download.arrayBuffer()), bytes);

  const removed = await basic.remove(file.id);
  t.is(removed.status, 200, removed.text);
  t.false(existsSync(objectFile(bucket, objectKey)));
  t.deepEqual((await basic.list()).body.data, []);
  t.like((await basic.quota()).body.data, { usedBytes: 0 });
  t.is((await basic.redirect(file.id)).status, 404);
});

test("an upload cut off mid-way leaves no object and no file: gw aborts its multipart upload", async (t) => {
  const cut = storageApi(gateway, keys.cut!);
  const agentId = agentIdOf(home, "cut");
  const upload = streamingUpload(gateway, keys.cut!, "half.bin");
  await upload.sendUntil(20 * MiB);
  // The multipart upload is under way: its first part is in the bucket.
  const created = await eventually(
    () => bucket.requests.find((request) => request.method === "POST" && request.url.includes(`/${agentId}/`) && request.url.endsWith("?uploads=")),
    "CreateMultipartUpload for the cut upload",
  );
  await eventually(() => bucket.requests.some((request) => request.method === "PUT" && request.url.includes(`/${agentId}/`)), "a part sent");
  upload.cut();

  const fileKey = created!.url.slice(`/${BUCKET}/`.length).replace(/\?uploads=$/, "");
  const abort = await eventually(
    () => bucket.requests.find((request) => request.method === "DELETE" && request.url.startsWith(`/${BUCKET}/${fileKey}?uploadId=`)),
    "AbortMultipartUpload for the cut upload",
  );
  t.truthy(abort);
  t.false(
    bucket.requests.some((request) => request.method === "POST" && request.url.startsWith(`/${BUCKET}/${fileKey}?uploadId=`)),
    "never completed",
  );
  t.deepEqual(
    objectKeys(bucket).filter((key) => key.startsWith(`${PREFIX}/${agentId}/`)),
    [],
  );
  await eventually(async () => (await cut.quota()).body.data.usedBytes === 0, "the quota given back");
  t.deepEqual((await cut.list()).body.data, []);
});

test("the blob store itself: keys listed back under the prefix, removing a missing blob is no error", async (t) => {
  // Straight to the store, not through a config file: no `${NAME}` interpolation here.
  const options = s3Options(bucket.endpoint, { accessKeyId: "S3RVER", secretAccessKey: SECRET, prefix: "direct-test/" });
  const store = await createBlobStore({ driver: "s3", options }, tempDir("gw-unused-"));
  try {
    t.true(store.streams);
    for (const key of ["agent_a:file_1", "agent_a:file_2", "agent_b:file_3"]) {
      t.is(await store.write(key, Readable.from([Buffer.from(key)])), key.length);
    }
    t.deepEqual((await store.keys()).sort(), ["agent_a:file_1", "agent_a:file_2", "agent_b:file_3"]);
    t.true(await store.has("agent_a:file_1"));
    const blob = await store.read("agent_b:file_3");
    t.is(blob?.sizeBytes, "agent_b:file_3".length);
    await store.remove("agent_a:file_1");
    await store.remove("agent_a:file_1");
    t.false(await store.has("agent_a:file_1"));
    t.is(await store.read("agent_a:file_1"), null);
    blob?.body.destroy();
  } finally {
    await store.close();
  }
});

test("wrong credentials: an upload is answered 503 {message} naming the store's refusal without a secret, /ready names the blob store, the log has the detail", async (t) => {
  const wrongHome = await s3Home(s3Options(bucket.endpoint, { accessKeyId: "NOT-A-KEY", secretAccessKey: SECRET }));
  const wrong = await startTestGateway(wrongHome);
  try {
    const key = await addKey(wrongHome, "refused", "pro");
    const linesBefore = quietLogger.lines.length;
    const answer = await storageApi(wrong, key).upload("x.bin", randomBytes(1024));
    t.is(answer.status, 503, answer.text);
    t.deepEqual(answer.body, { message: "The file store could not serve this request (S3 PutObject: InvalidAccessKeyId); try again later." });
    t.false(answer.text.includes(SECRET));
    t.deepEqual((await storageApi(wrong, key).list()).body.data, []);

    const ready = await fetch(`${wrong.url}/ready`);
    t.is(ready.status, 503);
    t.like(await ready.json(), { error: { code: "not_ready", message: "Not ready: the blob_store check failed." } });

    const logged = quietLogger.lines.slice(linesBefore).join("\n");
    t.regex(logged, /S3 PutObject gw-blobs\/tenant-a\/\S+ at 127\.0\.0\.1:\d+ was refused: InvalidAccessKeyId/);
    t.false(logged.includes(SECRET));
  } finally {
    await wrong.shutdown();
  }
});

test("a store that cannot be reached: downloads and uploads are answered 503 {message} naming the cause, not a hang, no secret", async (t) => {
  const doomed = await startBucket();
  const doomedHome = await s3Home(s3Options(doomed.endpoint));
  const running = await startTestGateway(doomedHome);
  try {
    const api = storageApi(running, await addKey(doomedHome, "stranded", "pro"));
    const stored = await api.upload("kept.txt", "bytes before the store went away", "text/plain");
    t.is(stored.status, 201, stored.text);
    const link = (await api.url(stored.body.data.id)).body.data.url;
    await doomed.server.close();
    const linesBefore = quietLogger.lines.length;

    const download = await fetch(link);
    t.is(download.status, 503);
    const downloadBody = await download.text();
    t.deepEqual(JSON.parse(downloadBody), { message: "The file store could not serve this request (S3 GetObject: ECONNREFUSED); try again later." });
    t.false(downloadBody.includes(SECRET));

    const upload = await api.upload("new.txt", "no store to take it", "text/plain");
    t.is(upload.status, 503, upload.text);
    t.regex(upload.body.message, /^The file store could not serve this request \(S3 (PutObject|CreateMultipartUpload): ECONNREFUSED\); try again later\.$/);
    t.false(upload.text.includes(SECRET));

    const logged = quietLogger.lines.slice(linesBefore).join("\n");
    t.regex(logged, /S3 GetObject gw-blobs\/tenant-a\/\S+ at 127\.0\.0\.1:\d+ failed: the store could not be reached \(ECONNREFUSED\)/);
    t.false(logged.includes(SECRET));
  } finally {
    await running.shutdown();
  }
});

test("a store that takes the connection and never answers: the upload is answered 503 {message} once storage.options.timeoutMs has passed", async (t) => {
  const silent = net.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const port = (silent.address() as AddressInfo).port;
  const silentHome = await s3Home(s3Options(`http://127.0.0.1:${port}`, { timeoutMs: 300 }));
  const running = await startTestGateway(silentHome);
  try {
    const linesBefore = quietLogger.lines.length;
    const upload = await storageApi(running, await addKey(silentHome, "waiting", "pro")).upload("w.txt", "never stored", "text/plain");
    t.is(upload.status, 503, upload.text);
    t.deepEqual(upload.body, { message: "The file store could not serve this request (S3 PutObject: no answer within 300 ms); try again later." });
    t.regex(quietLogger.lines.slice(linesBefore).join("\n"), /S3 PutObject gw-blobs\/tenant-a\/\S+ at 127\.0\.0\.1:\d+ did not answer within 300 ms/);
  } finally {
    await running.shutdown();
    silent.close();
  }
});

test("a missing s3 option stops the start with a message naming it, without echoing the secret", async (t) => {
  const options = s3Options(bucket.endpoint);
  delete options.bucket;
  const error = await t.throwsAsync(startTestGateway(await s3Home(options)));
  t.regex(error!.message, /storage\.options\.bucket is required/);
  t.false(error!.message.includes(SECRET));

  const unsetSecret = await t.throwsAsync(startTestGateway(await s3Home(s3Options(bucket.endpoint, { secretAccessKey: "${GW_TEST_S3_UNSET}" }))));
  t.regex(unsetSecret!.message, /storage\.options\.secretAccessKey is required/);
});
