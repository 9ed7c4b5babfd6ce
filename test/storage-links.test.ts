// Signed links against a real gw: tampering, expiry (signed with the home's own key and a past
// expiry: no waiting), method, presigned PUT rules (Content-Type, size, once), deletion, restart.

import { readFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { buildSignedUrl } from "../src/blobs/signed-links.js";
import { homePaths } from "../src/config/paths.js";
import { type Answer, answer, eventually, type StorageApi, storageApi } from "./_storage.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let gateway: TestGateway;
let home: string;
const keys: Record<string, string> = {};
const api = (agent: string): StorageApi => storageApi(gateway, keys[agent]!);

test.before(async () => {
  home = await makeHome((config) => {
    config.plans = { free: {}, pro: { requestsPerMinute: 100_000 }, max: {} };
  });
  gateway = await startTestGateway(home);
  for (const agent of ["tamper", "expiry", "methods", "puts", "once", "twice", "race", "deleted", "chunked"]) keys[agent] = await addKey(home, agent, "pro");
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

function secretOf(directory: string): Buffer {
  return Buffer.from(readFileSync(path.join(homePaths(directory).dataDir, "storage", "signing.key"), "utf8").trim(), "hex");
}

function messageOnly(result: Answer): boolean {
  return Object.keys(result.body).length === 1 && typeof result.body.message === "string";
}

async function storedFile(client: StorageApi, content = "signed bytes") {
  const file = (await client.upload("signed.txt", content, "text/plain")).body.data;
  return { file, link: (await client.url(file.id)).body.data.url as string };
}

test("a link altered in any part is 403 {message}", async (t) => {
  const { link } = await storedFile(api("tamper"));
  t.is((await fetch(link)).status, 200);
  const variants: Array<[string, (url: URL) => void]> = [
    ["expires moved", (url) => url.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 86_400))],
    ["size changed", (url) => url.searchParams.set("size", "999999")],
    ["type changed", (url) => url.searchParams.set("type", "text/html")],
    ["signature flipped", (url) => url.searchParams.set("signature", flip(url.searchParams.get("signature")!))],
    ["signature removed", (url) => url.searchParams.delete("signature")],
    ["expires removed", (url) => url.searchParams.delete("expires")],
    ["signature garbage", (url) => url.searchParams.set("signature", "../../etc/passwd")],
    ["another id", (url) => (url.pathname = url.pathname.replace(/.$/, (last) => (last === "A" ? "B" : "A")))],
  ];
  for (const [label, alter] of variants) {
    const url = new URL(link);
    alter(url);
    const result = await answer(await fetch(url));
    t.is(result.status, 403, label);
    t.true(messageOnly(result), label);
    t.regex(result.body.message, /not valid/, label);
  }
});

test("an expired link is 410 {message}, a current one with the same key works (no waiting: signed with the home's key)", async (t) => {
  const { file } = await storedFile(api("expiry"), "expiring");
  const secret = secretOf(home);
  const claims = { method: "GET" as const, path: `/v1/storage/blobs/${file.id}`, contentType: "text/plain", sizeBytes: 8 };
  const expired = buildSignedUrl(gateway.url, secret, { ...claims, expires: Math.floor(Date.now() / 1000) - 1 });
  const result = await answer(await fetch(expired));
  t.is(result.status, 410);
  t.true(messageOnly(result));
  t.regex(result.body.message, /expired/);
  const current = buildSignedUrl(gateway.url, secret, { ...claims, expires: Math.floor(Date.now() / 1000) + 60 });
  t.is(await (await fetch(current)).text(), "expiring");
  // Signed by another key: refused.
  const forged = buildSignedUrl(gateway.url, Buffer.alloc(32, 1), { ...claims, expires: Math.floor(Date.now() / 1000) + 60 });
  t.is((await fetch(forged)).status, 403);
});

test("a link works only with the method it was signed for", async (t) => {
  const client = api("methods");
  const { link } = await storedFile(client);
  const put = await answer(await fetch(link, { method: "PUT", headers: { "content-type": "text/plain" }, body: "overwrite!!!" }));
  t.is(put.status, 403);
  t.regex(put.body.message, /for GET requests only/);
  t.is((await fetch(link, { method: "HEAD" })).status, 403);
  const presigned = (await client.presign({ filename: "up.bin", contentType: "application/octet-stream", sizeBytes: 4 })).body.data;
  const get = await answer(await fetch(presigned.uploadUrl));
  t.is(get.status, 403);
  t.regex(get.body.message, /for PUT requests only/);
  t.is(await (await fetch(link)).text(), "signed bytes");
});

test("presigned PUT: the signed Content-Type only; more bytes than signed 413, fewer 400; nothing stored until it is right", async (t) => {
  const client = api("puts");
  const { id, uploadUrl } = (await client.presign({ filename: "img.png", contentType: "image/png", sizeBytes: 8 })).body.data;
  const attempts: Array<[string, RequestInit, number, RegExp]> = [
    ["wrong type", { headers: { "content-type": "text/html" }, body: "12345678" }, 403, /signed for Content-Type image\/png/],
    ["no type", { body: new Uint8Array(8) }, 403, /signed for Content-Type/],
    ["too many bytes", { headers: { "content-type": "image/png" }, body: "123456789" }, 413, /signed for 8 bytes/],
    ["too few bytes", { headers: { "content-type": "image/png" }, body: "1234567" }, 400, /signed for 8 bytes/],
  ];
  for (const [label, init, status, message] of attempts) {
    const result = await answer(await fetch(uploadUrl, { method: "PUT", ...init }));
    t.is(result.status, status, `${label}: ${result.text}`);
    t.true(messageOnly(result), label);
    t.regex(result.body.message, message, label);
    t.is((await client.url(id)).status, 409, label);
  }
  const ok = await fetch(uploadUrl, { method: "PUT", headers: { "content-type": "IMAGE/PNG" }, body: "12345678" });
  t.is(ok.status, 200);
  t.is(await (await fetch((await client.url(id)).body.data.url)).text(), "12345678");
});

test("a presigned upload link works once", async (t) => {
  const client = api("once");
  const { id, uploadUrl } = (await client.presign({ filename: "once.txt", contentType: "text/plain", sizeBytes: 5 })).body.data;
  t.is((await fetch(uploadUrl, { method: "PUT", headers: { "content-type": "text/plain" }, body: "first" })).status, 200);
  const second = await answer(await fetch(uploadUrl, { method: "PUT", headers: { "content-type": "text/plain" }, body: "again" }));
  t.is(second.status, 403);
  t.true(messageOnly(second));
  t.regex(second.body.message, /already used/);
  t.is(await (await fetch((await client.url(id)).body.data.url)).text(), "first");
});

test("two PUTs to one link at once: the second is 409 while the first streams", async (t) => {
  const client = api("twice");
  const { uploadUrl } = (await client.presign({ filename: "slow.bin", contentType: "application/octet-stream", sizeBytes: 6 })).body.data;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const streaming = new Promise<void>((resolve) => (started = resolve));
  const slowBody = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(new TextEncoder().encode("abc"));
      started();
      await held;
      controller.enqueue(new TextEncoder().encode("def"));
      controller.close();
    },
  });
  const first = fetch(uploadUrl, {
    method: "PUT",
    headers: { "content-type": "application/octet-stream", "content-length": "6" },
    body: slowBody,
    duplex: "half",
  } as RequestInit);
  await streaming;
  t.true(
    await eventually(async () => {
      const second = await fetch(uploadUrl, { method: "PUT", headers: { "content-type": "application/octet-stream" }, body: "zzzzzz" });
      return second.status === 409;
    }),
  );
  release();
  t.is((await first).status, 200);
});

test("deleting a file makes its download links and its upload link fail", async (t) => {
  const client = api("deleted");
  const { file, link } = await storedFile(client);
  const redirect = (await client.redirect(file.id)).headers.get("location")!;
  t.is((await client.remove(file.id)).status, 200);
  for (const old of [link, redirect]) {
    const result = await answer(await fetch(old));
    t.is(result.status, 404);
    t.true(messageOnly(result));
  }
  const pending = (await client.presign({ filename: "never.txt", contentType: "text/plain", sizeBytes: 3 })).body.data;
  t.is((await client.remove(pending.id)).status, 200);
  const put = await answer(await fetch(pending.uploadUrl, { method: "PUT", headers: { "content-type": "text/plain" }, body: "abc" }));
  t.is(put.status, 404);
  t.is((await client.quota()).body.data.usedBytes, 0);
});

test("a chunked PUT (no Content-Length) is counted as it arrives: exact size stored, more refused", async (t) => {
  const client = api("chunked");
  const chunked = (parts: string[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
        controller.close();
      },
    });
  const exact = (await client.presign({ filename: "c.txt", contentType: "text/plain", sizeBytes: 6 })).body.data;
  const stored = await fetch(exact.uploadUrl, {
    method: "PUT",
    headers: { "content-type": "text/plain" },
    body: chunked(["abc", "def"]),
    duplex: "half",
  } as RequestInit);
  t.is(stored.status, 200);
  const over = (await client.presign({ filename: "d.txt", contentType: "text/plain", sizeBytes: 4 })).body.data;
  // The gateway stops reading at once: the client sees a 413, or the connection closed under it.
  const refused = await fetch(over.uploadUrl, {
    method: "PUT",
    headers: { "content-type": "text/plain" },
    body: chunked(["abc", "def", "ghi"]),
    duplex: "half",
  } as RequestInit).then(
    (response) => response.status,
    () => "closed",
  );
  t.true(refused === 413 || refused === "closed", String(refused));
  t.is((await client.url(over.id)).status, 409);
  t.is((await client.quota()).body.data.usedBytes, 10);
});

test("links, records, used bytes and operation counts survive a restart", async (t) => {
  const restartHome = await makeHome((config) => {
    config.plans = { free: {}, pro: { requestsPerMinute: 100_000, storageOperationsPerPeriod: 3 }, max: {} };
  });
  let server = await startTestGateway(restartHome);
  const key = await addKey(restartHome, "restart", "pro");
  let client = storageApi(server, key);
  const file = (await client.upload("kept.txt", "kept across restarts", "text/plain")).body.data;
  const pending = (await client.presign({ filename: "later.txt", contentType: "text/plain", sizeBytes: 5 })).body.data;
  const link = new URL((await client.url(file.id)).body.data.url);
  await server.shutdown();

  server = await startTestGateway(restartHome);
  t.teardown(() => server.shutdown());
  client = storageApi(server, key);
  t.is((await client.list()).body.pagination.total, 2);
  t.is((await client.quota()).body.data.usedBytes, 20 + 5);
  // Same signing key: the old link (on the new port) still downloads.
  t.is(await (await fetch(`${server.url}${link.pathname}${link.search}`)).text(), "kept across restarts");
  // The pending presigned upload still takes its bytes after the restart.
  const uploadUrl = new URL(pending.uploadUrl);
  t.is(
    (await fetch(`${server.url}${uploadUrl.pathname}${uploadUrl.search}`, { method: "PUT", headers: { "content-type": "text/plain" }, body: "later" })).status,
    200,
  );
  // Two operations were counted before the restart: one is left.
  t.is((await client.remove(file.id)).status, 200);
  const over = await client.upload("one-too-many.txt", "x", "text/plain");
  t.is(over.status, 429);
});

test("an upload link whose lifetime ran out without bytes is refused (410) and its record and space are given back", async (t) => {
  const shortHome = await makeHome((config) => {
    config.storage = { driver: "fs", linkTtlSeconds: 1 };
    config.plans = { free: {}, pro: { requestsPerMinute: 100_000 }, max: {} };
  });
  // The service's clock, moved by hand: no sleeping for the link to expire.
  let now = Date.now();
  const server = await startTestGateway(shortHome, { now: () => now });
  t.teardown(() => server.shutdown());
  const client = storageApi(server, await addKey(shortHome, "short", "pro"));
  const pending = (await client.presign({ filename: "late.txt", contentType: "text/plain", sizeBytes: 4 })).body.data;
  t.is(pending.expiresIn, 1);
  t.is((await client.quota()).body.data.usedBytes, 4);
  now += 2000;
  const late = await answer(await fetch(pending.uploadUrl, { method: "PUT", headers: { "content-type": "text/plain" }, body: "late" }));
  t.is(late.status, 410);
  t.true(messageOnly(late));
  t.deepEqual((await client.list()).body.data, []);
  t.is((await client.quota()).body.data.usedBytes, 0);
});

test("a configured signing secret signs the links (several gateways can share it)", async (t) => {
  const secret = "s".repeat(48);
  const sharedHome = await makeHome((config) => {
    config.storage = { driver: "fs", signingSecret: secret };
  });
  const server = await startTestGateway(sharedHome);
  t.teardown(() => server.shutdown());
  const client = storageApi(server, await addKey(sharedHome, "shared", "pro"));
  const file = (await client.upload("s.txt", "shared", "text/plain")).body.data;
  const own = buildSignedUrl(server.url, Buffer.from(secret), {
    method: "GET",
    path: `/v1/storage/blobs/${file.id}`,
    expires: Math.floor(Date.now() / 1000) + 60,
    contentType: "text/plain",
    sizeBytes: 6,
  });
  t.is(await (await fetch(own)).text(), "shared");
});

function flip(signature: string): string {
  return `${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`;
}
