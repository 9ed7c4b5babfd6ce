// Storage building blocks without a server: filename and content-type rules, sizes, the signed
// link format (with a fixed clock), list queries, the in-memory index, and one conformance suite
// that every blob store driver passes (the streaming fs driver and unstorage's memory driver).

import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import test from "ava";
import contentDisposition from "content-disposition";
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { blobKey } from "../src/blobs/blob-store.js";
import { createBlobStore } from "../src/blobs/create-blob-store.js";
import { PARTIAL_DIRECTORY } from "../src/blobs/fs-stream-driver.js";
import { buildSignedUrl, type LinkClaims, signLink, verifyLink } from "../src/blobs/signed-links.js";
import { loadSigningSecret } from "../src/blobs/signing-secret.js";
import { UnstorageBlobStore } from "../src/blobs/unstorage-blob-store.js";
import { normalizeContentType, sameContentType } from "../src/gateway/storage/content-type.js";
import { attachmentDisposition, normalizeFilename } from "../src/gateway/storage/file-name.js";
import { parseListQuery, parsePresignRequest } from "../src/gateway/storage/storage-requests.js";
import { isFileId, newFileId } from "../src/gateway/storage/stored-file.js";
import type { FileRecord } from "../src/store/file-records.js";
import { AgentFiles } from "../src/store/local-file-state.js";
import { roundedSize as formatBytes } from "../src/text/byte-sizes.js";
import { tempDir } from "./helpers/temp-dirs.js";

test("filenames: last path segment, no control or bidi characters, never empty", (t) => {
  const cases: Array<[string | undefined, string]> = [
    ["report.pdf", "report.pdf"],
    ["../../etc/passwd", "passwd"],
    ["/etc/shadow", "shadow"],
    ["C:\\Windows\\System32\\evil.exe", "evil.exe"],
    ["\\\\server\\share\\x.txt", "x.txt"],
    ["evil\u0000.txt", "evil.txt"],
    ["a\r\nSet-Cookie: x=1.txt", "aSet-Cookie: x=1.txt"],
    ["invoice\u202Egpj.exe", "invoicegpj.exe"],
    ["résumé 履歴書 🎉.pdf", "résumé 履歴書 🎉.pdf"],
    ["e\u0301te.txt", "\u00e9te.txt"],
    ["..", "file"],
    [".", "file"],
    ["dir/", "file"],
    ["   ", "file"],
    ["", "file"],
    [undefined, "file"],
  ];
  for (const [raw, expected] of cases) t.is(normalizeFilename(raw), expected, JSON.stringify(raw));
});

test("filenames: very long names are cut to 255 characters, keeping the extension and whole characters", (t) => {
  const long = normalizeFilename(`${"x".repeat(5000)}.tar.gz`);
  t.is(Array.from(long).length, 255);
  t.true(long.endsWith(".gz"));
  const emoji = normalizeFilename("🎉".repeat(400));
  t.is(Array.from(emoji).length, 255);
  t.false(emoji.includes("\uFFFD"));
  t.true(/^(?:🎉)+$/u.test(emoji));
});

test("content types: type/subtype with parameters; anything else refused", (t) => {
  t.is(normalizeContentType("Image/PNG"), "image/png");
  t.is(normalizeContentType("text/plain; charset=utf-8"), "text/plain; charset=utf-8");
  t.is(normalizeContentType('multipart/mixed; boundary="a b"'), 'multipart/mixed; boundary="a b"');
  for (const bad of ["", "text", "text/", "/plain", "text/plain\r\nX-Evil: 1", "text/html\nx", "a b/c", "text/plain; charset", `${"x".repeat(300)}/y`]) {
    t.is(normalizeContentType(bad), null, JSON.stringify(bad));
  }
  t.true(sameContentType("IMAGE/png", "image/png"));
  t.false(sameContentType("image/jpeg", "image/png"));
  t.false(sameContentType(null, "image/png"));
});

test("sizes are written in binary units, as the plans count", (t) => {
  t.is(formatBytes(0), "0 B");
  t.is(formatBytes(1023), "1023 B");
  t.is(formatBytes(1536), "1.5 KB");
  t.is(formatBytes(100 * 1024 * 1024), "100 MB");
  t.is(formatBytes(5 * 1024 ** 3), "5 GB");
  t.is(formatBytes(10 * 1024 ** 3), "10 GB");
});

const secret = Buffer.alloc(32, 7);
const claims: LinkClaims = {
  method: "GET",
  path: "/v1/storage/blobs/file_01ARZ3NDEKTSV4RRFFQ69G5FAV",
  expires: 2_000_000_000,
  contentType: "image/png",
  sizeBytes: 1234,
};

function presented(url: string, method = "GET") {
  const parsed = new URL(url);
  return { method, path: parsed.pathname, query: parsed.searchParams };
}

test("signed links: built on the given base, verified until they expire (fixed clock)", (t) => {
  const url = buildSignedUrl("https://files.example.com/gw/", secret, claims);
  t.true(url.startsWith("https://files.example.com/gw/v1/storage/blobs/file_01ARZ3NDEKTSV4RRFFQ69G5FAV?"));
  const parsed = new URL(url);
  t.is(parsed.searchParams.get("type"), "image/png");
  t.is(parsed.searchParams.get("size"), "1234");
  const request = { method: "GET", path: claims.path, query: parsed.searchParams };
  t.deepEqual(verifyLink(secret, request, claims.expires), { ok: true, claims });
  t.deepEqual(verifyLink(secret, request, claims.expires + 1), { ok: false, reason: "expired", claims });
});

test("signed links: any altered part, another secret or another method is refused", (t) => {
  const url = buildSignedUrl("http://127.0.0.1:1", secret, claims);
  const now = claims.expires - 100;
  const altered = (name: string, value: string) => {
    const parsed = new URL(url);
    parsed.searchParams.set(name, value);
    return verifyLink(secret, presented(parsed.href), now);
  };
  t.like(altered("expires", String(claims.expires + 3600)), { ok: false, reason: "signature" });
  t.like(altered("size", "1235"), { ok: false, reason: "signature" });
  t.like(altered("type", "text/html"), { ok: false, reason: "signature" });
  const signature = new URL(url).searchParams.get("signature")!;
  t.like(altered("signature", `${signature.slice(0, -1)}${signature.endsWith("A") ? "B" : "A"}`), { ok: false, reason: "signature" });
  t.like(altered("signature", "short"), { ok: false, reason: "malformed" });
  t.like(altered("expires", "soon"), { ok: false, reason: "malformed" });
  const otherPath = new URL(url);
  otherPath.pathname = "/v1/storage/blobs/file_01ARZ3NDEKTSV4RRFFQ69G5FAW";
  t.like(verifyLink(secret, presented(otherPath.href), now), { ok: false, reason: "signature" });
  t.like(verifyLink(Buffer.alloc(32, 8), presented(url), now), { ok: false, reason: "signature" });
  t.like(verifyLink(secret, presented(url, "PUT"), now), { ok: false, reason: "method", claims: { method: "GET" } });
  t.like(verifyLink(secret, presented(url, "HEAD"), now), { ok: false, reason: "method" });
  const withoutSignature = new URL(url);
  withoutSignature.searchParams.delete("signature");
  t.like(verifyLink(secret, presented(withoutSignature.href), now), { ok: false, reason: "malformed" });
});

test("signed links: exactly one spelling of a signature is accepted", (t) => {
  const signature = signLink(secret, claims);
  t.regex(signature, /^[A-Za-z0-9_-]{43}$/);
  // base64url's last character carries 2 spare bits: its siblings decode to the same bytes.
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const last = alphabet.indexOf(signature.at(-1)!);
  const sibling = `${signature.slice(0, -1)}${alphabet[last ^ 1]}`;
  const query = new URLSearchParams({ expires: String(claims.expires), size: "1234", type: "image/png", signature: sibling });
  t.like(verifyLink(secret, { method: "GET", path: claims.path, query }, 0), { ok: false, reason: "signature" });
});

test("the signing key is created once, shared by parallel opens, and a configured secret wins", (t) => {
  const directory = tempDir("gw-secret-");
  const file = path.join(directory, "storage", "signing.key");
  const keys = Array.from({ length: 5 }, () => loadSigningSecret(null, file).toString("hex"));
  t.is(new Set(keys).size, 1);
  t.is(keys[0]!.length, 64);
  t.deepEqual(readdirSync(path.dirname(file)), ["signing.key"]);
  t.is(loadSigningSecret("c".repeat(40), file).toString(), "c".repeat(40));
  writeFileSync(file, "not a key");
  t.throws(() => loadSigningSecret(null, file), { message: /not 64 hex characters/ });
});

test("list query: defaults 1 and 50; out-of-range values are refused, not clamped", (t) => {
  t.deepEqual(parseListQuery(new URLSearchParams()), { page: 1, limit: 50 });
  t.deepEqual(parseListQuery(new URLSearchParams("page=3&limit=100")), { page: 3, limit: 100 });
  for (const bad of ["page=0", "page=-1", "page=1.5", "page=abc", "page=", "limit=0", "limit=101", "limit=2.5", "limit=ten", "page=1&page=2"]) {
    t.throws(() => parseListQuery(new URLSearchParams(bad)), { message: /(page|limit) must be a whole number/ }, bad);
  }
});

test("presign request: fields required and typed; names tidied; types checked", (t) => {
  t.deepEqual(parsePresignRequest({ filename: "../a.png", contentType: "Image/PNG", sizeBytes: 3 }), {
    filename: "a.png",
    contentType: "image/png",
    sizeBytes: 3,
  });
  t.throws(() => parsePresignRequest({ contentType: "image/png", sizeBytes: 3 }), { message: "filename is required." });
  t.throws(() => parsePresignRequest({ filename: "a", sizeBytes: 3 }), { message: "contentType is required." });
  t.throws(() => parsePresignRequest({ filename: "a", contentType: "image/png" }), { message: "sizeBytes is required." });
  t.throws(() => parsePresignRequest({ filename: "a", contentType: "image/png", sizeBytes: -1 }), { message: /must not be negative/ });
  t.throws(() => parsePresignRequest({ filename: "a", contentType: "image/png", sizeBytes: 1.5 }), { message: /whole number/ });
  t.throws(() => parsePresignRequest({ filename: "a", contentType: "image/png", sizeBytes: "3" }), { message: /sizeBytes must be a number/ });
  t.throws(() => parsePresignRequest({ filename: "a", contentType: "png", sizeBytes: 3 }), { message: /MIME type/ });
});

test("file ids are ULIDs in creation order; nothing else passes as an id", (t) => {
  const ids = Array.from({ length: 50 }, () => newFileId(Date.now()));
  t.deepEqual([...ids].sort(), ids);
  t.true(ids.every(isFileId));
  for (const bad of [
    "../../etc/passwd",
    "file_",
    "file_01ARZ3NDEKTSV4RRFFQ69G5FA",
    "file_01ARZ3NDEKTSV4RRFFQ69G5FAV/..",
    "FILE_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "file_01ARZ3NDEKTSV4RRFFQ69G5FAU",
  ]) {
    t.false(isFileId(bad), bad);
  }
});

test("agent index: newest first, pages, used bytes kept as records come and go", (t) => {
  const files = new AgentFiles();
  const records: FileRecord[] = Array.from({ length: 5 }, (_, index) => ({
    id: newFileId(Date.now()),
    agentId: "agt_x",
    filename: `f${index}`,
    contentType: "text/plain",
    sizeBytes: 10 * (index + 1),
    createdAt: new Date().toISOString(),
    state: "ready",
  }));
  for (const record of [...records].reverse()) files.add(record);
  t.is(files.count, 5);
  t.is(files.usedBytes, 150);
  t.deepEqual(
    files.page(1, 2).map((record) => record.filename),
    ["f4", "f3"],
  );
  t.deepEqual(
    files.page(3, 2).map((record) => record.filename),
    ["f0"],
  );
  t.deepEqual(files.page(4, 2), []);
  files.delete(records[4]!.id);
  t.is(files.usedBytes, 100);
  t.deepEqual(
    files.page(1, 50).map((record) => record.filename),
    ["f3", "f2", "f1", "f0"],
  );
  files.add({ ...records[0]!, sizeBytes: 5 });
  t.is(files.usedBytes, 95);
  t.is(files.count, 4);
});

test("Content-Disposition for hostile names is one line of visible ASCII that parses back", (t) => {
  t.is(attachmentDisposition("résumé.pdf"), "attachment; filename=\"resume.pdf\"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf");
  for (const raw of [
    "../../etc/passwd",
    "a\r\nSet-Cookie: x=1",
    "evil\u0000.txt",
    "résumé 履歴書 🎉.pdf",
    'quote"back\\slash.txt',
    `${"y".repeat(3000)}.bin`,
  ]) {
    const name = normalizeFilename(raw);
    const header = attachmentDisposition(name);
    t.regex(header, /^attachment; [\x20-\x7e]+$/, raw);
    t.is(contentDisposition.parse(header).parameters.filename, name, raw);
  }
});

// One conformance suite for every blob store: streaming fs (the default) and unstorage's memory driver.
const stores: Array<[string, () => Promise<UnstorageBlobStore>]> = [
  ["fs", () => createBlobStore({ driver: "fs", options: {} }, tempDir("gw-blobs-"))],
  ["memory", async () => new UnstorageBlobStore(createStorage({ driver: memoryDriver() }))],
];

function chunks(count: number, size: number, failAfter?: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (failAfter !== undefined && sent === failAfter) {
        this.destroy(new Error("source failed"));
        return;
      }
      if (sent === count) return void this.push(null);
      sent += 1;
      this.push(Buffer.alloc(size, sent % 256));
    },
  });
}

async function readAll(body: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

for (const [name, open] of stores) {
  test(`blob store (${name}): write, read back, list, remove`, async (t) => {
    const store = await open();
    const key = blobKey("agt_1", "file_1");
    t.is(await store.write(key, chunks(10, 1000)), 10_000);
    t.true(await store.has(key));
    t.deepEqual(await store.keys(), [key]);
    const blob = await store.read(key);
    t.is(blob!.sizeBytes, 10_000);
    const bytes = await readAll(blob!.body);
    t.is(bytes.length, 10_000);
    t.is(bytes[9_999], 10);
    await store.remove(key);
    await store.remove(key);
    t.false(await store.has(key));
    t.is(await store.read(key), null);
    await store.close();
  });

  test(`blob store (${name}): a source that fails midway leaves no blob`, async (t) => {
    const store = await open();
    const key = blobKey("agt_1", "file_2");
    await t.throwsAsync(store.write(key, chunks(10, 1000, 4)), { message: "source failed" });
    t.false(await store.has(key));
    t.deepEqual(await store.keys(), []);
    await store.close();
  });

  test(`blob store (${name}): keys outside the gateway's own shape are refused`, async (t) => {
    const store = await open();
    for (const key of ["../x", "a/b", "a:..:b", "", "a b", "a:b:c:d:e"]) {
      await t.throwsAsync(store.write(key, chunks(1, 1)), { message: /invalid blob key/ }, key);
      await t.throwsAsync(store.read(key), { message: /invalid blob key/ }, key);
    }
    await store.close();
  });
}

test("blob store (fs): streams, writes atomically, and sweeps temp files of dead writes", async (t) => {
  const base = tempDir("gw-blobs-");
  const store = await createBlobStore({ driver: "fs", options: {} }, base);
  t.true(store.streams);
  await t.throwsAsync(store.write(blobKey("agt_1", "file_3"), chunks(5, 100, 2)));
  t.deepEqual(readdirSync(path.join(base, PARTIAL_DIRECTORY)), []);
  t.false(existsSync(path.join(base, "agt_1", "file_3")));
  // A temp file of a process that is gone goes at once, whatever its age; one of a live process
  // (here the test runner's parent) stays until it has been quiet for the given time.
  const deadPid = await exitedChildPid();
  writeFileSync(path.join(base, PARTIAL_DIRECTORY, `${deadPid}-dead`), "partial");
  writeFileSync(path.join(base, PARTIAL_DIRECTORY, `${process.ppid}-live`), "partial");
  t.is(await store.sweepPartials(60_000), 1);
  t.deepEqual(readdirSync(path.join(base, PARTIAL_DIRECTORY)), [`${process.ppid}-live`]);
  t.is(await store.sweepPartials(0), 1);
  t.deepEqual(readdirSync(path.join(base, PARTIAL_DIRECTORY)), []);
  await store.close();
});

test("blob store: an unknown driver name is refused with the list of kinds", async (t) => {
  await t.throwsAsync(createBlobStore({ driver: "nope", options: {} }, os.tmpdir()), { message: /not an unstorage driver/ });
});

/** The pid of a child process that has exited: certainly not a live writer. */
async function exitedChildPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid!;
}
