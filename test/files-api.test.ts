// OpenAI's Files API (/v1/files) against a real gw, called the way a user would: the official
// `openai` SDK (files.create, retrieve, list with auto-pagination, content, delete) and
// hand-built multipart forms. The files are the agent's storage: one id space with /v1/storage,
// the same quota, size cap, operation counting and isolation, and errors in the OpenAI envelope.
import test from "ava";
import OpenAI, { toFile } from "openai";
import { type Answer, agentIdOf, answer, filePart, MULTIPART, multipart, storageApi, storedPaths, testPlan } from "./_storage.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const MAX_FILE_BYTES = 256 * 1024;

let gateway: TestGateway;
let home: string;
const keys: Record<string, string> = {};
const AGENTS = ["creator", "orders", "lister", "purposes", "spaces", "deleter", "owner", "intruder", "refused", "methods", "inside"];

test.before(async () => {
  home = await makeHome((config) => {
    config.storage.maxFileBytes = MAX_FILE_BYTES;
    config.plans = { free: {}, pro: { requestsPerMinute: 100_000 }, max: {}, small: testPlan(1000), slow: { ...testPlan(1_000_000), requestsPerMinute: 2 } };
  });
  gateway = await startTestGateway(home);
  for (const agent of AGENTS) keys[agent] = await addKey(home, agent, "pro");
  keys.small = await addKey(home, "small", "small");
  keys.slow = await addKey(home, "slow", "slow");
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

const sdk = (agent: string) => new OpenAI({ apiKey: keys[agent]!, baseURL: gateway.v1, maxRetries: 0 });

/** Raw HTTP as the agent, for what the SDK does not show (bodies of errors, headers, hand-built forms). */
function call(agent: string, pathname: string, init: RequestInit = {}): Promise<Answer> {
  const headers = { authorization: `Bearer ${keys[agent]}`, ...(init.headers as Record<string, string> | undefined) };
  return fetch(`${gateway.url}${pathname}`, { ...init, headers }).then(answer);
}

/** Every byte value, several times over: a binary file no text handling would leave intact. */
const BINARY = Uint8Array.from({ length: 1024 }, (_, index) => (index * 7 + 3) % 256);

const textPart = (name: string, value: string) => ({ headers: [`Content-Disposition: form-data; name="${name}"`], content: value });
const postForm = (agent: string, parts: Parameters<typeof multipart>[0]) =>
  call(agent, "/v1/files", { method: "POST", body: new Uint8Array(multipart(parts)), headers: { "content-type": MULTIPART } });

async function createFile(client: OpenAI, filename: string, content: string | Uint8Array, purpose: OpenAI.FilePurpose = "batch") {
  return client.files.create({ file: await toFile(typeof content === "string" ? Buffer.from(content) : content, filename), purpose });
}

/** The OpenAI error envelope naming `param`, and nothing of the storage dialect. */
function assertOpenAIError(
  t: { is: (a: unknown, b: unknown, m?: string) => void; true: (a: boolean, m?: string) => void },
  result: Answer,
  status: number,
  param?: string,
) {
  t.is(result.status, status, result.text);
  t.is(typeof result.body?.error?.message, "string", result.text);
  t.is(result.body.error.type, "invalid_request_error", result.text);
  t.is(typeof result.body.error.code, "string", result.text);
  t.is(result.body.error.param, param, result.text);
  t.true(!("message" in result.body), result.text);
}

test("files.create stores the file and answers the FileObject; retrieve answers the same; content streams back the very bytes", async (t) => {
  const client = sdk("creator");
  const before = Math.floor(Date.now() / 1000);
  const created = await client.files.create({ file: await toFile(BINARY, "data.bin", { type: "application/x-custom" }), purpose: "fine-tune" });
  t.deepEqual(Object.keys(created).sort(), ["bytes", "created_at", "expires_at", "filename", "id", "object", "purpose", "status", "status_details"]);
  t.regex(created.id, /^file_[0-9A-Z]{26}$/);
  t.like(created, {
    object: "file",
    bytes: BINARY.length,
    filename: "data.bin",
    purpose: "fine-tune",
    status: "processed",
    expires_at: null,
    status_details: null,
  });
  t.true(Number.isInteger(created.created_at) && created.created_at >= before && created.created_at <= Math.floor(Date.now() / 1000) + 1);

  t.deepEqual(await client.files.retrieve(created.id), created);

  const content = await client.files.content(created.id);
  t.is(content.status, 200);
  t.is(content.headers.get("content-type"), "application/x-custom");
  t.is(content.headers.get("content-length"), String(BINARY.length));
  t.is(content.headers.get("x-content-type-options"), "nosniff");
  t.deepEqual(new Uint8Array(await content.arrayBuffer()), BINARY);
});

test("a hand-built form: `purpose` before the file or after its bytes, either way the file is stored with it", async (t) => {
  const first = await postForm("creator", [textPart("purpose", "vision"), filePart("file", 'filename="before.png"', BINARY, "image/png")]);
  t.is(first.status, 200, first.text);
  t.like(first.body, { object: "file", filename: "before.png", bytes: BINARY.length, purpose: "vision" });
  const second = await postForm("creator", [filePart("file", 'filename="after.jsonl"', '{"a":1}\n', "application/jsonl"), textPart("purpose", "batch")]);
  t.is(second.status, 200, second.text);
  t.like(second.body, { object: "file", filename: "after.jsonl", bytes: 8, purpose: "batch" });
  const client = sdk("creator");
  t.is((await client.files.retrieve(second.body.id)).purpose, "batch");
  t.is(await (await client.files.content(second.body.id)).text(), '{"a":1}\n');
});

test("list: the SDK's auto-pagination over 7 files at limit 3, newest first by default, oldest first with order asc, and from `after`", async (t) => {
  const client = sdk("orders");
  const ids: string[] = [];
  for (let index = 0; index < 7; index += 1) ids.push((await createFile(client, `f${index}.txt`, `file ${index}`)).id);
  const newest = [...ids].reverse();

  const collect = async (query: OpenAI.FileListParams) => {
    const seen: string[] = [];
    for await (const file of client.files.list(query)) seen.push(file.id);
    return seen;
  };
  t.deepEqual(await collect({ limit: 3 }), newest);
  t.deepEqual(await collect({ limit: 3, order: "asc" }), ids);
  t.deepEqual(await collect({ limit: 3, order: "asc", after: ids[2] }), ids.slice(3));
  t.deepEqual(await collect({ limit: 3, after: ids[2] }), [ids[1], ids[0]]);
  t.deepEqual(await collect({}), newest);

  // The pages themselves, as OpenAI shapes them.
  const page = await call("orders", "/v1/files?limit=3");
  t.is(page.status, 200);
  t.deepEqual(Object.keys(page.body).sort(), ["data", "first_id", "has_more", "last_id", "object"]);
  t.like(page.body, { object: "list", first_id: newest[0], last_id: newest[2], has_more: true });
  t.deepEqual(
    page.body.data.map((file: { id: string }) => file.id),
    newest.slice(0, 3),
  );
  const last = await call("orders", `/v1/files?limit=3&after=${newest[5]}`);
  t.deepEqual(
    { ...last.body, data: last.body.data.map((file: { id: string }) => file.id) },
    { object: "list", data: [newest[6]], first_id: newest[6], last_id: newest[6], has_more: false },
  );
  const exact = await call("orders", `/v1/files?limit=7`);
  t.is(exact.body.has_more, false);
  t.is(exact.body.data.length, 7);
  t.deepEqual((await call("lister", "/v1/files")).body, { object: "list", data: [], first_id: null, last_id: null, has_more: false });
});

test("list: `purpose` keeps only the files of that purpose, paginated; a /v1/storage upload is user_data", async (t) => {
  const client = sdk("purposes");
  const batch: string[] = [];
  for (let index = 0; index < 5; index += 1) {
    batch.push((await createFile(client, `in${index}.jsonl`, "{}\n", "batch")).id);
    await createFile(client, `a${index}.txt`, "x", "assistants");
  }
  const stored = await storageApi(gateway, keys.purposes!).upload("plain.txt", "plain", "text/plain");
  t.is(stored.status, 201);

  const seen: string[] = [];
  for await (const file of client.files.list({ purpose: "batch", limit: 2 })) {
    t.is(file.purpose, "batch");
    seen.push(file.id);
  }
  t.deepEqual(seen, [...batch].reverse());
  const firstPage = await call("purposes", "/v1/files?purpose=batch&limit=5&order=asc");
  t.deepEqual(
    firstPage.body.data.map((file: { id: string }) => file.id),
    batch,
  );
  t.is(firstPage.body.has_more, false);
  const plain = await call("purposes", "/v1/files?purpose=user_data");
  t.deepEqual(
    plain.body.data.map((file: { id: string; purpose: string }) => [file.id, file.purpose]),
    [[stored.body.data.id, "user_data"]],
  );
  t.is((await call("purposes", "/v1/files?purpose=vision")).body.data.length, 0);
});

test("one id space with /v1/storage: a /v1/files file is listed there in the storage shape, a storage upload is a user_data FileObject, a presigned upload waiting for bytes is not a file", async (t) => {
  const client = sdk("spaces");
  const storage = storageApi(gateway, keys.spaces!);
  const created = await createFile(client, "report.jsonl", "{}\n", "batch");
  const listed = await storage.list();
  t.deepEqual(listed.body.data, [
    { id: created.id, filename: "report.jsonl", contentType: "application/octet-stream", sizeBytes: 3, createdAt: listed.body.data[0].createdAt },
  ]);
  t.is(Math.floor(Date.parse(listed.body.data[0].createdAt) / 1000), created.created_at);

  const uploaded = (await storage.upload("notes.txt", "hello", "text/plain")).body.data;
  t.like(await client.files.retrieve(uploaded.id), { id: uploaded.id, filename: "notes.txt", bytes: 5, purpose: "user_data", status: "processed" });
  t.is(await (await client.files.content(uploaded.id)).text(), "hello");

  const presigned = (await storage.presign({ filename: "later.bin", contentType: "application/octet-stream", sizeBytes: 4 })).body.data;
  const waiting = await call("spaces", `/v1/files/${presigned.id}`);
  assertOpenAIError(t, waiting, 404);
  t.false((await call("spaces", "/v1/files")).body.data.some((file: { id: string }) => file.id === presigned.id));
  const put = await fetch(presigned.uploadUrl, { method: "PUT", body: new Uint8Array([1, 2, 3, 4]), headers: { "content-type": "application/octet-stream" } });
  t.is(put.status, 200);
  t.like(await client.files.retrieve(presigned.id), { bytes: 4, purpose: "user_data" });
});

test("delete answers {id, object, deleted: true}, counts one storage operation, and the file is gone from both APIs", async (t) => {
  const client = sdk("deleter");
  const storage = storageApi(gateway, keys.deleter!);
  const created = await createFile(client, "gone.txt", "bye");
  const operationsBefore = Number((await storage.quota()).headers.get("x-service-storage-operations-used"));
  t.deepEqual(await client.files.delete(created.id), { id: created.id, object: "file", deleted: true });
  t.is(Number((await storage.quota()).headers.get("x-service-storage-operations-used")), operationsBefore + 1);
  t.is((await storage.quota()).body.data.usedBytes, 0);

  for (const request of [() => client.files.retrieve(created.id), () => client.files.content(created.id), () => client.files.delete(created.id)]) {
    const error = await t.throwsAsync(request(), { instanceOf: OpenAI.NotFoundError });
    t.is(error?.status, 404);
  }
  t.deepEqual((await storage.list()).body.data, []);
  t.deepEqual((await call("deleter", "/v1/files")).body.data, []);
  // The failed delete counted nothing.
  t.is(Number((await storage.quota()).headers.get("x-service-storage-operations-used")), operationsBefore + 1);
});

test("another agent's file answers exactly like a missing one or a malformed id: 404, same body, on retrieve, content and delete", async (t) => {
  const owned = await createFile(sdk("owner"), "secret.txt", "mine");
  const missing = "file_01ARZ3NDEKTSV4RRFFQ69G5FAV";
  const paths = (id: string) => [
    ["GET", `/v1/files/${id}`],
    ["GET", `/v1/files/${id}/content`],
    ["DELETE", `/v1/files/${id}`],
  ];
  for (const [index, [method, foreign]] of paths(owned.id).entries()) {
    const theirs = await call("intruder", foreign!, { method });
    assertOpenAIError(t, theirs, 404);
    t.is(theirs.body.error.code, "file_not_found");
    for (const other of [paths(missing)[index]![1]!, paths("not-an-id")[index]![1]!, paths("..%2F..%2Fsecret")[index]![1]!]) {
      const answered = await call("intruder", other, { method });
      t.is(answered.status, theirs.status, other);
      t.deepEqual(answered.body, theirs.body, other);
    }
  }
  // Still the owner's, untouched.
  t.is(await (await sdk("owner").files.content(owned.id)).text(), "mine");
});

// Serial (ava runs serial tests before the others): no other upload's temp file is on disk meanwhile.
test.serial("refused uploads: bad or missing purpose, expires_after, before or after the bytes: 400 naming the field, nothing stored or counted", async (t) => {
  const storage = storageApi(gateway, keys.refused!);
  const agentId = agentIdOf(home, "refused");
  const stored = () => storedPaths(home).blobs.filter((file) => file.startsWith(agentId) || file.includes(".partial"));
  const operations = async () => Number((await storage.quota()).headers.get("x-service-storage-operations-used"));
  const operationsBefore = await operations();
  const file = filePart("file", 'filename="x.bin"', BINARY);

  const sdkError = await t.throwsAsync(sdk("refused").files.create({ file: await toFile(BINARY, "x.bin"), purpose: "nonsense" as OpenAI.FilePurpose }), {
    instanceOf: OpenAI.BadRequestError,
  });
  t.is(sdkError?.param, "purpose");
  const expiring = await t.throwsAsync(
    sdk("refused").files.create({ file: await toFile(BINARY, "x.bin"), purpose: "batch", expires_after: { anchor: "created_at", seconds: 3600 } }),
    { instanceOf: OpenAI.BadRequestError },
  );
  t.is(expiring?.param, "expires_after");
  t.regex(expiring?.message ?? "", /expires_after/);

  for (const [label, parts, param] of [
    ["bad purpose first", [textPart("purpose", "training"), file], "purpose"],
    ["bad purpose after the bytes", [file, textPart("purpose", "training")], "purpose"],
    ["no purpose", [file], "purpose"],
    ["empty purpose", [file, textPart("purpose", "")], "purpose"],
    ["purpose twice", [textPart("purpose", "batch"), file, textPart("purpose", "vision")], "purpose"],
    ["expires_after after the bytes", [textPart("purpose", "batch"), file, textPart("expires_after[seconds]", "3600")], "expires_after"],
  ] as const) {
    const result = await postForm("refused", [...parts]);
    assertOpenAIError(t, result, 400, param);
    t.regex(result.body.error.message, new RegExp(param), label);
  }
  // No file at all: still the OpenAI envelope.
  const noFile = await postForm("refused", [textPart("purpose", "batch")]);
  t.is(noFile.status, 400);
  t.is(typeof noFile.body.error?.message, "string");

  t.deepEqual(stored(), []);
  t.is((await storage.quota()).body.data.usedBytes, 0);
  t.deepEqual((await storage.list()).body.data, []);
  t.is(await operations(), operationsBefore);
});

test("list refuses a bad limit, order, after or purpose with 400 naming it", async (t) => {
  for (const [query, param] of [
    ["limit=0", "limit"],
    ["limit=10001", "limit"],
    ["limit=1.5", "limit"],
    ["limit=abc", "limit"],
    ["limit=", "limit"],
    ["limit=2&limit=3", "limit"],
    ["order=newest", "order"],
    ["after=file-abc", "after"],
    ["purpose=training", "purpose"],
  ]) {
    const result = await call("lister", `/v1/files?${query}`);
    assertOpenAIError(t, result, 400, param);
    t.regex(result.body.error.message, new RegExp(param!), query);
  }
  t.is((await call("lister", "/v1/files?limit=10000&order=asc")).status, 200);
});

test("over the quota or over the size cap: 413 in the OpenAI envelope, nothing stored, the quota unchanged", async (t) => {
  const client = sdk("small");
  const storage = storageApi(gateway, keys.small!);
  const first = await createFile(client, "first.bin", new Uint8Array(600));
  t.is(first.bytes, 600);
  const operationsBefore = Number((await storage.quota()).headers.get("x-service-storage-operations-used"));
  const agentId = agentIdOf(home, "small");

  const over = await postForm("small", [textPart("purpose", "batch"), filePart("file", 'filename="second.bin"', new Uint8Array(600))]);
  assertOpenAIError(t, over, 413);
  t.is(over.body.error.code, "storage_quota_exceeded");
  const sdkOver = await t.throwsAsync(createFile(client, "third.bin", new Uint8Array(600)), { instanceOf: OpenAI.APIError });
  t.is(sdkOver?.status, 413);

  const big = await postForm("creator", [filePart("file", 'filename="big.bin"', new Uint8Array(MAX_FILE_BYTES + 1)), textPart("purpose", "batch")]);
  assertOpenAIError(t, big, 413);
  t.is(big.body.error.code, "file_too_large");
  t.is((await postForm("creator", [textPart("purpose", "batch"), filePart("file", 'filename="max.bin"', new Uint8Array(MAX_FILE_BYTES))])).status, 200);

  t.is((await storage.quota()).body.data.usedBytes, 600);
  t.deepEqual(
    (await call("small", "/v1/files")).body.data.map((file: { id: string }) => file.id),
    [first.id],
  );
  t.deepEqual(
    storedPaths(home).blobs.filter((file) => file.startsWith(agentId)),
    [`${agentId}/${first.id}`],
  );
  t.is(Number((await storage.quota()).headers.get("x-service-storage-operations-used")), operationsBefore);
});

test("keys and rate limits as on /v1/storage: no key 401, over the plan's requests per minute 429, both in the OpenAI envelope", async (t) => {
  const anonymous = await fetch(`${gateway.url}/v1/files`).then(answer);
  t.is(anonymous.status, 401);
  t.like(anonymous.body.error, { type: "authentication_error", code: "invalid_api_key" });
  const answers = [await call("slow", "/v1/files"), await call("slow", "/v1/files"), await call("slow", "/v1/files")];
  t.deepEqual(
    answers.map((result) => result.status),
    [200, 200, 429],
  );
  t.like(answers[2]!.body.error, { type: "rate_limit_error", code: "rate_limit_exceeded" });
  t.truthy(answers[2]!.headers.get("retry-after"));
  t.is(answers[0]!.headers.get("x-ratelimit-limit-requests"), "2");
});

test("other methods on the Files paths are 405, unknown paths under them 404, in the OpenAI envelope", async (t) => {
  const { id } = await createFile(sdk("methods"), "m.txt", "m");
  for (const [method, pathname] of [
    ["PUT", "/v1/files"],
    ["DELETE", "/v1/files"],
    ["PATCH", `/v1/files/${id}`],
    ["POST", `/v1/files/${id}`],
    ["POST", `/v1/files/${id}/content`],
    ["DELETE", `/v1/files/${id}/content`],
  ]) {
    const result = await call("methods", pathname!, { method });
    assertOpenAIError(t, result, 405);
  }
  t.is((await call("methods", "/v1/files", { method: "HEAD" })).status, 405);
  const unknown = await call("methods", `/v1/files/${id}/content/more`, { method: "POST" });
  assertOpenAIError(t, unknown, 404);
  // Still there.
  t.is((await sdk("methods").files.retrieve(id)).id, id);
});

test("inside the gateway (no HTTP): a file stored with a purpose, listed, read and removed through the same service", async (t) => {
  const { OpenAIFiles } = await import("../src/gateway/storage/openai-files.js");
  const { Readable } = await import("node:stream");
  const files = new OpenAIFiles(gateway.gateway.storage);
  const agentId = agentIdOf(home, "inside");
  const limits = { storageBytes: 1_000_000, storageOperationsPerPeriod: 100 };
  const stored = await files.store(agentId, limits, {
    filename: "out.jsonl",
    contentType: "application/jsonl",
    body: Readable.from([Buffer.from("{}\n")]),
    purpose: "batch",
  });
  t.like(stored, { object: "file", filename: "out.jsonl", bytes: 3, purpose: "batch" });
  t.deepEqual(await sdk("inside").files.retrieve(stored.id), stored);
  t.deepEqual((await files.list(agentId, { limit: 10, order: "desc", purpose: "batch" })).data, [stored]);
  const content = await files.openContent(agentId, stored.id);
  const chunks: Buffer[] = [];
  for await (const chunk of content.body) chunks.push(chunk as Buffer);
  t.is(Buffer.concat(chunks).toString(), "{}\n");
  t.is(content.contentType, "application/jsonl");
  t.deepEqual(await files.remove(agentId, limits, stored.id), { id: stored.id, object: "file", deleted: true });
  t.is((await call("inside", `/v1/files/${stored.id}`)).status, 404);
});
