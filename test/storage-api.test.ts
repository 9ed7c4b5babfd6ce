// The Storage endpoints over HTTP against a real gw (real files in a temp home): every endpoint,
// its errors as `{message}`, isolation between agents, traversal attempts and hostile filenames.

import http from "node:http";
import test from "ava";
import contentDisposition from "content-disposition";
import { type Answer, agentIdOf, filePart, MULTIPART, multipart, type StorageApi, storageApi, storedPaths, testPlan } from "./_storage.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let gateway: TestGateway;
let home: string;
const keys: Record<string, string> = {};
const api = (agent: string): StorageApi => storageApi(gateway, keys[agent]!);
const AGENTS = ["uploader", "urler", "alice", "bob", "lister", "hostile", "errors", "presigner", "presign-errors", "deleter", "quotas", "methods"];

test.before(async () => {
  home = await makeHome((config) => {
    config.plans = { free: {}, pro: { requestsPerMinute: 100_000 }, max: {}, small: testPlan(1000) };
  });
  gateway = await startTestGateway(home);
  for (const agent of AGENTS) keys[agent] = await addKey(home, agent, "pro");
  keys.small = await addKey(home, "small", "small");
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

/** The body is exactly `{message}`: the spec's storage error shape. */
function assertMessageOnly(
  t: { deepEqual: (a: unknown, b: unknown, m?: string) => void; is: (a: unknown, b: unknown, m?: string) => void },
  result: Answer,
  status: number,
  label = "",
) {
  t.is(result.status, status, `${label} ${result.text}`);
  t.deepEqual(Object.keys(result.body), ["message"], label);
  t.is(typeof result.body.message, "string", label);
}

test("upload: 201 {data: stored file}, listed, downloadable through its 302 with the right headers", async (t) => {
  const alice = api("uploader");
  const uploaded = await alice.upload("notes.txt", "hello storage", "text/plain");
  t.is(uploaded.status, 201, uploaded.text);
  t.deepEqual(Object.keys(uploaded.body), ["data"]);
  const file = uploaded.body.data;
  t.deepEqual(Object.keys(file).sort(), ["contentType", "createdAt", "filename", "id", "sizeBytes"]);
  t.like(file, { filename: "notes.txt", contentType: "text/plain", sizeBytes: 13 });
  t.regex(file.id, /^file_[0-9A-Z]{26}$/);
  t.false(Number.isNaN(Date.parse(file.createdAt)));

  const listed = await alice.list();
  t.is(listed.status, 200);
  t.deepEqual(listed.body.data, [file]);
  t.deepEqual(listed.body.pagination, { page: 1, limit: 50, total: 1 });

  // Links are built from the listening address, never from the Host header the client sent.
  const redirect = await alice.call(`/v1/storage/files/${file.id}`, { headers: { host: "evil.example" } });
  t.is(redirect.status, 302);
  const location = redirect.headers.get("location")!;
  t.true(location.startsWith(`${gateway.url}/v1/storage/blobs/${file.id}?`), location);
  t.false(location.includes("evil.example"));

  const download = await fetch(location);
  t.is(download.status, 200);
  t.is(await download.text(), "hello storage");
  t.is(download.headers.get("content-type"), "text/plain");
  t.is(download.headers.get("content-length"), "13");
  t.is(download.headers.get("content-disposition"), 'attachment; filename="notes.txt"');
  t.is(download.headers.get("x-content-type-options"), "nosniff");
  t.regex(download.headers.get("content-security-policy") ?? "", /sandbox/);
});

test("url: {data:{url, filename, contentType, expiresIn: 3600}} whose link downloads the bytes", async (t) => {
  const alice = api("urler");
  const file = (await alice.upload("pixel.png", new Uint8Array([137, 80, 78, 71]), "image/png")).body.data;
  const result = await alice.url(file.id);
  t.is(result.status, 200);
  t.deepEqual(Object.keys(result.body.data).sort(), ["contentType", "expiresIn", "filename", "url"]);
  t.like(result.body.data, { filename: "pixel.png", contentType: "image/png", expiresIn: 3600 });
  const url = new URL(result.body.data.url);
  t.true(Number(url.searchParams.get("expires")) - Date.now() / 1000 > 3590);
  const download = await fetch(result.body.data.url);
  t.deepEqual(new Uint8Array(await download.arrayBuffer()), new Uint8Array([137, 80, 78, 71]));
  t.is(download.headers.get("content-type"), "image/png");
});

test("quota: {data:{usedBytes, limitBytes, usedFormatted, limitFormatted}} from the plan", async (t) => {
  const quotas = api("quotas");
  const before = await quotas.quota();
  t.deepEqual(before.body, { data: { usedBytes: 0, limitBytes: 5 * 1024 ** 3, usedFormatted: "0 B", limitFormatted: "5 GB" } });
  await quotas.upload("a.bin", new Uint8Array(1536));
  const after = await quotas.quota();
  t.like(after.body.data, { usedBytes: 1536, usedFormatted: "1.5 KB" });
  const small = await storageApi(gateway, keys.small!).quota();
  t.like(small.body.data, { limitBytes: 1000, limitFormatted: "1000 B" });
});

test("list: newest first, page and limit, total; out-of-range page or limit is 400 {message}", async (t) => {
  const lister = api("lister");
  const ids: string[] = [];
  for (let index = 0; index < 5; index += 1) ids.push((await lister.upload(`f${index}.txt`, `content ${index}`, "text/plain")).body.data.id);
  const newestFirst = [...ids].reverse();
  t.deepEqual(
    (await lister.list()).body.data.map((file: { id: string }) => file.id),
    newestFirst,
  );
  const page1 = await lister.list("?page=1&limit=2");
  t.deepEqual(
    page1.body.data.map((file: { id: string }) => file.id),
    newestFirst.slice(0, 2),
  );
  t.deepEqual(page1.body.pagination, { page: 1, limit: 2, total: 5 });
  t.deepEqual(
    (await lister.list("?page=3&limit=2")).body.data.map((file: { id: string }) => file.id),
    newestFirst.slice(4),
  );
  const beyond = await lister.list("?page=4&limit=2");
  t.deepEqual(beyond.body, { data: [], pagination: { page: 4, limit: 2, total: 5 } });
  t.is((await lister.list("?limit=100")).body.data.length, 5);
  for (const query of ["?page=0", "?page=-1", "?page=1.5", "?page=x", "?limit=0", "?limit=101", "?limit=-5", "?limit=abc"]) {
    const result = await lister.list(query);
    assertMessageOnly(t, result, 400, query);
    t.regex(result.body.message, /(page|limit) must be/);
  }
});

test("presigned upload: record at once, 200 {data: file + uploadUrl + expiresIn}, PUT with the same Content-Type stores the bytes", async (t) => {
  const presigner = api("presigner");
  const presigned = await presigner.presign({ filename: "clip.mp4", contentType: "video/mp4", sizeBytes: 11 });
  t.is(presigned.status, 200, presigned.text);
  const data = presigned.body.data;
  t.deepEqual(Object.keys(data).sort(), ["contentType", "createdAt", "expiresIn", "filename", "id", "sizeBytes", "uploadUrl"]);
  t.like(data, { filename: "clip.mp4", contentType: "video/mp4", sizeBytes: 11, expiresIn: 3600 });
  t.true(data.uploadUrl.startsWith(`${gateway.url}/v1/storage/blobs/${data.id}?`));
  // The record exists (and its space is taken) before any byte arrives.
  t.deepEqual((await presigner.list()).body.data, [{ id: data.id, filename: "clip.mp4", contentType: "video/mp4", sizeBytes: 11, createdAt: data.createdAt }]);
  t.is((await presigner.quota()).body.data.usedBytes, 11);
  const early = await presigner.url(data.id);
  assertMessageOnly(t, early, 409);

  const put = await fetch(data.uploadUrl, { method: "PUT", headers: { "content-type": "video/mp4" }, body: "hello video" });
  t.is(put.status, 200);
  t.like(await put.json(), { data: { id: data.id, sizeBytes: 11 } });
  const link = (await presigner.url(data.id)).body.data.url;
  t.is(await (await fetch(link)).text(), "hello video");
  t.is((await presigner.quota()).body.data.usedBytes, 11);
});

test("presigned upload: bad bodies are 400/415 {message}; over 50 MB is 413", async (t) => {
  const presigner = api("presign-errors");
  const cases: Array<[unknown, number, RegExp]> = [
    [{ contentType: "text/plain", sizeBytes: 1 }, 400, /filename is required/],
    [{ filename: "a", sizeBytes: 1 }, 400, /contentType is required/],
    [{ filename: "a", contentType: "text/plain" }, 400, /sizeBytes is required/],
    [{ filename: "a", contentType: "not a type", sizeBytes: 1 }, 400, /MIME type/],
    [{ filename: "a", contentType: "text/plain", sizeBytes: -1 }, 400, /negative/],
    [{ filename: "a", contentType: "text/plain", sizeBytes: 2.5 }, 400, /whole number/],
    [{ filename: "", contentType: "text/plain", sizeBytes: 1 }, 400, /filename must not be empty/],
    [{ filename: "a", contentType: "text/plain", sizeBytes: 50 * 1024 * 1024 + 1 }, 413, /50 MB limit/],
  ];
  for (const [body, status, message] of cases) {
    const result = await presigner.presign(body);
    assertMessageOnly(t, result, status, JSON.stringify(body));
    t.regex(result.body.message, message);
  }
  assertMessageOnly(
    t,
    await presigner.call("/v1/storage/presigned-upload", {
      method: "POST",
      body: "filename=a",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    }),
    415,
  );
  assertMessageOnly(
    t,
    await presigner.call("/v1/storage/presigned-upload", { method: "POST", body: "{not json", headers: { "content-type": "application/json" } }),
    400,
  );
  t.is((await presigner.presign({ filename: "max.bin", contentType: "application/octet-stream", sizeBytes: 50 * 1024 * 1024 })).status, 200);
});

test("upload errors are clear 4xx {message}, never 500, and store nothing", async (t) => {
  const errors = api("errors");
  const cases: Array<[string, Buffer | string, string, number, RegExp]> = [
    ["no file part", multipart([{ headers: ['Content-Disposition: form-data; name="purpose"'], content: "x" }]), MULTIPART, 400, /no `file` part/],
    ["empty form", `--gwtestboundary--\r\n`, MULTIPART, 400, /no `file` part/],
    ["file as a text field", multipart([{ headers: ['Content-Disposition: form-data; name="file"'], content: "just text" }]), MULTIPART, 400, /must be a file/],
    ["file under another name", multipart([filePart("upload", 'filename="a.txt"', "x")]), MULTIPART, 400, /part named `file`/],
    [
      "two file parts",
      multipart([filePart("file", 'filename="a.txt"', "first"), filePart("file", 'filename="b.txt"', "second")]),
      MULTIPART,
      400,
      /exactly one file part/,
    ],
    ["cut off before the end", multipart([filePart("file", 'filename="a.txt"', "partial")], { end: false }), MULTIPART, 400, /malformed/],
    ["garbage", "this is not multipart at all", MULTIPART, 400, /no `file` part|malformed/],
    [
      "broken part header",
      `--gwtestboundary\r\nContent-Disposition form-data\x00\r\n\r\nx\r\n--gwtestboundary--\r\n`,
      MULTIPART,
      400,
      /malformed|no `file` part/,
    ],
    ["no boundary", multipart([filePart("file", 'filename="a.txt"', "x")]), "multipart/form-data", 400, /cannot be read/],
    ["JSON instead", '{"file":"x"}', "application/json", 415, /multipart\/form-data/],
    ["urlencoded instead", "file=x", "application/x-www-form-urlencoded", 415, /multipart\/form-data/],
    ["empty filename as text", multipart([filePart("file", 'filename=""', "x", "text/plain")]), MULTIPART, 400, /must be a file/],
  ];
  for (const [label, body, contentType, status, message] of cases) {
    const result = await errors.uploadRaw(body, contentType);
    assertMessageOnly(t, result, status, label);
    t.regex(result.body.message, message, label);
  }
  t.is((await errors.call("/v1/storage/upload", { method: "POST" })).status, 415);
  t.deepEqual((await errors.list()).body.pagination.total, 0);
  t.is((await errors.quota()).body.data.usedBytes, 0);
  const agentId = agentIdOf(home, "errors");
  const leftovers = storedPaths(home);
  t.deepEqual(
    leftovers.blobs.filter((file) => file.startsWith(agentId)),
    [],
  );
  t.deepEqual(
    leftovers.records.filter((file) => file.startsWith(agentId)),
    [],
  );
});

test("delete: {message}; bytes, record and links gone for good", async (t) => {
  const deleter = api("deleter");
  const file = (await deleter.upload("gone.txt", "soon gone", "text/plain")).body.data;
  const link = (await deleter.url(file.id)).body.data.url;
  const redirectLink = (await deleter.redirect(file.id)).headers.get("location")!;
  const agentId = agentIdOf(home, "deleter");
  t.true(storedPaths(home).blobs.includes(`${agentId}/${file.id}`));

  const removed = await deleter.remove(file.id);
  t.is(removed.status, 200);
  t.deepEqual(Object.keys(removed.body), ["message"]);
  t.deepEqual((await deleter.list()).body.pagination.total, 0);
  t.is((await deleter.quota()).body.data.usedBytes, 0);
  for (const result of [await deleter.redirect(file.id), await deleter.url(file.id), await deleter.remove(file.id)]) {
    assertMessageOnly(t, result, 404);
    t.is(result.body.message, "File not found.");
  }
  for (const old of [link, redirectLink]) {
    const download = await answer(await fetch(old));
    assertMessageOnly(t, download, 404);
  }
  t.false(storedPaths(home).blobs.includes(`${agentId}/${file.id}`));
  t.false(storedPaths(home).records.includes(`${agentId}/${file.id}.json`));
});

test("isolation: another agent's id is the same 404 as a missing one, for get, url and delete; lists never mix", async (t) => {
  const alice = api("alice");
  const bob = api("bob");
  const secret = (await alice.upload("alice-only.txt", "alice's secret", "text/plain")).body.data;
  const missing = await bob.redirect("file_01ARZ3NDEKTSV4RRFFQ69G5FAV");
  assertMessageOnly(t, missing, 404);
  for (const result of [await bob.redirect(secret.id), await bob.url(secret.id), await bob.remove(secret.id)]) {
    assertMessageOnly(t, result, 404);
    t.deepEqual(result.body, missing.body);
  }
  t.false((await bob.list()).body.data.some((file: { id: string }) => file.id === secret.id));
  const bobsFile = (await bob.upload("bob.txt", "bob", "text/plain")).body.data;
  t.false((await alice.list("?limit=100")).body.data.some((file: { id: string }) => file.id === bobsFile.id));
  // Alice's file survived Bob's delete attempt.
  t.is(await (await fetch((await alice.url(secret.id)).body.data.url)).text(), "alice's secret");
});

test("traversal attempts in the id get the same 404 {message} (get, url, delete), and reveal nothing", async (t) => {
  const alice = api("alice");
  const attempts = [
    "..%2F..%2Fmetadata.json",
    "..%2F..%2F..%2Fconfig.json",
    "%2e%2e%2f%2e%2e%2fsigning.key",
    "..%5C..%5Cconfig.json",
    "%2Fetc%2Fpasswd",
    "C:%5CWindows%5Cwin.ini",
    "file_..%2F..%2Fx",
    "file_01ARZ3NDEKTSV4RRFFQ69G5FAV%00",
    "a/b/c",
    "file_01ARZ3NDEKTSV4RRFFQ69G5FAV/..%2F..",
  ];
  for (const attempt of attempts) {
    for (const result of [
      await alice.call(`/v1/storage/files/${attempt}`),
      await alice.call(`/v1/storage/files/${attempt}/url`),
      await alice.call(`/v1/storage/files/${attempt}`, { method: "DELETE" }),
    ]) {
      assertMessageOnly(t, result, 404, attempt);
      t.is(result.body.message, "File not found.", attempt);
    }
  }
  // Sent as raw request targets: no client-side URL normalisation of the dot segments.
  for (const target of [
    "/v1/storage/files/..",
    "/v1/storage/files/%2e%2e",
    "/v1/storage/files/./..%2fx/url",
    "/v1/storage/files/x/../..",
    "/v1/storage/files/%2e%2e/url",
  ]) {
    for (const method of ["GET", "DELETE"]) {
      const result = await rawRequest(method, target, keys.alice!);
      assertMessageOnly(t, result, 404, `${method} ${target}`);
      t.is(result.body.message, "File not found.", `${method} ${target}`);
    }
  }
  // Dot segments that climb out of /v1/storage make a request for another path (URL rules):
  // still a 404 that serves nothing from the home.
  for (const target of ["/v1/storage/files/../../../data/metadata.json", "/v1/storage/files/%2e%2e/%2e%2e/%2e%2e/config.json"]) {
    const result = await rawRequest("GET", target, keys.alice!);
    t.is(result.status, 404, target);
    t.false(/agents|hash|providers/.test(result.text), target);
  }
});

function rawRequest(method: string, target: string, key: string): Promise<Answer> {
  const { hostname, port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: hostname, port, method, path: target, headers: { authorization: `Bearer ${key}` } }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: new Headers(), body: JSON.parse(text), text }));
    });
    request.on("error", reject);
    request.end();
  });
}

test("hostile filenames are stored (201) as plain names and served back in valid headers", async (t) => {
  const hostile = api("hostile");
  const long = `${"x".repeat(3000)}.txt`;
  const cases: Array<[string, string, string]> = [
    ["traversal", 'filename="../../etc/passwd"', "passwd"],
    ["absolute", 'filename="/etc/shadow"', "shadow"],
    ["windows path", 'filename="C:\\\\Windows\\\\System32\\\\evil.exe"', "evil.exe"],
    ["UNC path", 'filename="\\\\\\\\server\\\\share\\\\x.txt"', "x.txt"],
    ["NUL", "filename*=UTF-8''evil%00.txt", "evil.txt"],
    ["CR/LF (RFC 5987)", "filename*=UTF-8''a%0D%0ASet-Cookie%3A%20x%3D1.txt", "aSet-Cookie: x=1.txt"],
    ["CR/LF (HTML form escaping)", 'filename="a%0D%0AX-Evil: 1.txt"', "aX-Evil: 1.txt"],
    ["quote", 'filename="say %22hi%22.txt"', 'say "hi".txt'],
    ["very long", `filename="${long}"`, `${"x".repeat(251)}.txt`],
    ["unicode (UTF-8 raw)", 'filename="résumé 履歴書 🎉.pdf"', "résumé 履歴書 🎉.pdf"],
    ["unicode (RFC 5987)", `filename*=UTF-8''${encodeURIComponent("Ünïcødé ✓.txt")}`, "Ünïcødé ✓.txt"],
    ["bidi override", `filename*=UTF-8''${encodeURIComponent("invoice\u202Egpj.exe")}`, "invoicegpj.exe"],
    ["html", 'filename="<img src=x onerror=alert(1)>.html"', "<img src=x onerror=alert(1)>.html"],
    ["empty name", 'filename=""', "file"],
    ["dots", 'filename=".."', "file"],
  ];
  for (const [label, disposition, expected] of cases) {
    // An empty filename with text/plain reads as a text field (RFC 7578); as bytes it is a file.
    const result = await hostile.uploadRaw(
      multipart([filePart("file", disposition, `content of ${label}`, label === "empty name" ? "application/octet-stream" : "text/plain")]),
      MULTIPART,
    );
    t.is(result.status, 201, `${label}: ${result.text}`);
    t.is(result.body.data.filename, expected, label);
    const download = await fetch((await hostile.url(result.body.data.id)).body.data.url);
    t.is(download.status, 200, label);
    const header = download.headers.get("content-disposition")!;
    t.regex(header, /^attachment; [\x20-\x7e]+$/, label);
    t.is(contentDisposition.parse(header).parameters.filename, expected, label);
    t.is(await download.text(), `content of ${label}`, label);
  }
  // The same names through presigned uploads (JSON can carry any character).
  for (const [raw, expected] of [
    ["../../etc/passwd", "passwd"],
    ["nul\u0000\r\n.txt", "nul.txt"],
    [long, `${"x".repeat(251)}.txt`],
  ] as const) {
    const presigned = await hostile.presign({ filename: raw, contentType: "text/plain", sizeBytes: 1 });
    t.is(presigned.status, 200);
    t.is(presigned.body.data.filename, expected);
  }
  // Nothing outside the agent's own directory was written.
  const agentId = agentIdOf(home, "hostile");
  t.true(storedPaths(home).blobs.every((file) => !file.includes("passwd") && !file.includes("..")));
  t.true(
    storedPaths(home)
      .blobs.filter((file) => file.startsWith(agentId))
      .every((file) => /^agt_[0-9A-Z]+\/file_[0-9A-Z]{26}$/.test(file)),
  );
});

test("authentication: no key or a bad key is 401 {message} on every storage endpoint", async (t) => {
  const paths: Array<[string, string]> = [
    ["POST", "/v1/storage/upload"],
    ["GET", "/v1/storage/files"],
    ["GET", "/v1/storage/files/file_01ARZ3NDEKTSV4RRFFQ69G5FAV"],
    ["GET", "/v1/storage/files/file_01ARZ3NDEKTSV4RRFFQ69G5FAV/url"],
    ["DELETE", "/v1/storage/files/file_01ARZ3NDEKTSV4RRFFQ69G5FAV"],
    ["POST", "/v1/storage/presigned-upload"],
    ["GET", "/v1/storage/quota"],
  ];
  for (const [method, path] of paths) {
    const attempts: Array<Record<string, string>> = [{}, { authorization: "Bearer gw_notarealkeynotarealkeynotarealkeynotarealkey" }];
    for (const headers of attempts) {
      const result = await answer(await fetch(`${gateway.url}${path}`, { method, headers }));
      assertMessageOnly(t, result, 401, `${method} ${path}`);
    }
  }
});

test("other methods on storage paths are 405 {message}; unknown storage paths 404 {message}", async (t) => {
  const methods = api("methods");
  assertMessageOnly(t, await methods.call("/v1/storage/upload"), 405);
  assertMessageOnly(t, await methods.call("/v1/storage/files", { method: "POST" }), 405);
  assertMessageOnly(t, await methods.call("/v1/storage/quota", { method: "DELETE" }), 405);
  assertMessageOnly(t, await methods.call("/v1/storage/files/file_01ARZ3NDEKTSV4RRFFQ69G5FAV", { method: "PUT" }), 405);
  assertMessageOnly(t, await methods.call("/v1/storage/nothing-here"), 404);
  assertMessageOnly(t, await methods.call("/v1/storage/blobs/file_01ARZ3NDEKTSV4RRFFQ69G5FAV", { method: "DELETE" }), 404);
  // A path that is not valid percent-encoding is the client's error, not a 500.
  assertMessageOnly(t, await methods.call("/v1/storage/files/%E0%A4%A"), 400);
});

test("links use server.publicUrl when it is configured", async (t) => {
  const publicHome = await makeHome((config) => {
    config.server = { publicUrl: "https://files.example.com/gw/" };
  });
  const other = await startTestGateway(publicHome);
  t.teardown(() => other.shutdown());
  const key = await addKey(publicHome, "public", "pro");
  const client = storageApi(other, key);
  const file = (await client.upload("a.txt", "abc", "text/plain")).body.data;
  t.true((await client.redirect(file.id)).headers.get("location")!.startsWith(`https://files.example.com/gw/v1/storage/blobs/${file.id}?`));
  t.true((await client.url(file.id)).body.data.url.startsWith("https://files.example.com/gw/v1/storage/blobs/"));
  t.true(
    (await client.presign({ filename: "b", contentType: "text/plain", sizeBytes: 1 })).body.data.uploadUrl.startsWith(
      "https://files.example.com/gw/v1/storage/blobs/",
    ),
  );
  // The same link, presented to the gateway directly (a proxy would strip the prefix), works.
  const link = new URL((await client.url(file.id)).body.data.url);
  t.is(await (await fetch(`${other.url}${link.pathname.replace(/^\/gw/, "")}${link.search}`)).text(), "abc");
});

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
}
