// The Batch API run by gw, through the official openai SDK unchanged: files.create, then
// batches.create / retrieve / list / cancel and files.content. A 200-line batch with lines the
// upstream refuses, lines past the key's budget and lines answered from the response cache, each
// billed once through the ledger at the batch price; malformed input files refused with OpenAI's
// `errors` list and nothing billed; another agent's ids answered 404; a cancel that keeps the
// answers so far; a gw SIGKILLed mid-batch and started again finishing every line billed once.
import { readFileSync } from "node:fs";
import test from "ava";
import OpenAI, { toFile } from "openai";
import type { Batch } from "openai/resources/batches";
import { homePaths } from "../src/config/paths.js";
import { revokeKey } from "../src/store/provisioning.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { accessOf, addKey, gw, makeHome, type RawConfig, spawnServe, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let upstream: FakeOpenAI;
let gateway: TestGateway;
let key: string;

function configure(config: RawConfig, extra: { batch?: Record<string, unknown>; billing?: Record<string, unknown> } = {}): void {
  config.upstream = { retries: 0, breakerFailureThreshold: 0 };
  config.providers = { openai: { type: "openai", baseUrl: upstream.url, apiKey: "sk-batch-upstream" } };
  config.routes = [{ prefix: "openai/", provider: "openai" }];
  config.models = [{ id: "openai/gpt-4o-mini", name: "mini", context_length: 100_000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }];
  // One line at a time: the fake's queued behaviours meet the lines in order.
  config.batch = { concurrency: 1, ...extra.batch };
  config.billing = { batchDiscount: 0.5, ...extra.billing };
}

test.before(async () => {
  upstream = await startFakeOpenAI();
  gateway = await startTestGateway(await makeHome(configure));
  key = await addKey(gateway.home, "batcher", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await upstream?.close();
});

const client = (apiKey = key, base: string = gateway.v1) => new OpenAI({ baseURL: base, apiKey, maxRetries: 0 });

function rows(home = gateway.home): UsageRow[] {
  return UsageLog.readRows(homePaths(home).usageDir, periodOf(new Date()));
}

function chatLine(customId: string, content: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    custom_id: customId,
    method: "POST",
    url: "/v1/chat/completions",
    body: { model: "openai/gpt-4o-mini", max_tokens: 20, messages: [{ role: "user", content }], ...extra },
  });
}

async function submit(lines: string[], apiKey = key, base: string = gateway.v1): Promise<Batch> {
  const sdk = client(apiKey, base);
  const file = await sdk.files.create({ file: await toFile(Buffer.from(`${lines.join("\n")}\n`), "input.jsonl"), purpose: "batch" });
  return sdk.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: { run: "test" } });
}

async function ended(id: string, apiKey = key, base: string = gateway.v1): Promise<Batch> {
  return eventually(() => client(apiKey, base).batches.retrieve(id), {
    what: `batch ${id} to end`,
    until: (batch) => ["completed", "failed", "expired", "cancelled"].includes(batch.status),
    timeoutMs: 120_000,
    intervalMs: 100,
  });
}

async function jsonl(fileId: string | null | undefined, apiKey = key, base: string = gateway.v1): Promise<any[]> {
  if (!fileId) return [];
  const text = await (await client(apiKey, base).files.content(fileId)).text();
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
}

test.serial("a 200-line batch: answers, upstream refusals, lines past the budget and cached lines, each billed once at the batch price", async (t) => {
  upstream.reset();
  // Lines 0-119 reach the upstream, which refuses 50-69. Lines 120-149 ask for more output than
  // the key's budget can hold: 402 before any call. Lines 150-199 repeat lines 100-149 at
  // temperature 0 with a caching key: 150-169 are answered from the cache, 170-199 are 402 again.
  upstream.enqueue(...Array.from({ length: 120 }, (_, index) => (index >= 50 && index < 70 ? { status: 400 } : {})));
  const budgetKey = await addKey(gateway.home, "budgeted", "pro", { budget: { credits: 3_000, period: "month" }, cacheTtlSeconds: 600 });
  const request = (index: number) => {
    const extra: Record<string, unknown> = index >= 100 ? { temperature: 0 } : {};
    if (index >= 120) extra.max_tokens = 4_000;
    return { content: `question ${index}`, extra };
  };
  const lines = Array.from({ length: 200 }, (_, index) => {
    const { content, extra } = request(index >= 150 ? index - 50 : index);
    return chatLine(`line-${index}`, content, extra);
  });
  const created = await submit(lines, budgetKey);
  t.is(created.status, "in_progress");
  t.is(created.request_counts?.total, 200);
  t.deepEqual(created.metadata, { run: "test" });

  const batch = await ended(created.id, budgetKey);
  t.is(batch.status, "completed");
  t.truthy(batch.completed_at);
  t.truthy(batch.finalizing_at);
  const output = await jsonl(batch.output_file_id, budgetKey);
  const errors = await jsonl(batch.error_file_id, budgetKey);
  const ids = (entries: any[]) => entries.map((line) => Number(line.custom_id.slice("line-".length)));
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, index) => from + index);
  t.deepEqual(ids(output), [...range(0, 50), ...range(70, 120), ...range(150, 170)], "answers in the input's order");
  t.deepEqual(ids(errors), [...range(50, 70), ...range(120, 150), ...range(170, 200)]);
  t.deepEqual(batch.request_counts, { total: 200, completed: 120, failed: 80 });
  for (const line of output) {
    t.is(line.response.status_code, 200);
    t.is(line.error, null);
    t.regex(line.response.body.choices[0].message.content, /^echo: question \d+$/);
  }
  t.is(output[100].response.body.choices[0].message.content, "echo: question 100", "line 150 is line 100's answer");
  for (const line of errors.slice(0, 20)) t.is(line.response.status_code, 400);
  for (const line of errors.slice(20)) {
    t.is(line.response.status_code, 402);
    t.is(line.response.body.error.code, "insufficient_credits");
  }
  t.is(upstream.requests.filter((request) => request.path.endsWith("/chat/completions")).length, 120);

  const batchRows = rows().filter((row) => row.batch === created.id);
  t.is(batchRows.length, 120, "one row per answered line");
  t.is(new Set(batchRows.map((row) => row.id)).size, 120);
  t.is(batchRows.filter((row) => row.cached).length, 20);
  for (const row of batchRows.filter((row) => row.cached)) t.is(row.credits, 0);
  t.true(batchRows.reduce((sum, row) => sum + row.credits, 0) <= 3_000, "the budget holds");
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  t.regex(metrics, /^gw_batches\{status="completed"\} [1-9]/m);
  // Each line has its access line, as a request has.
  const access = await accessOf(output[0].id);
  t.like(access, {
    method: "BATCH",
    path: "/v1/chat/completions",
    status: 200,
    agent: "budgeted",
    model: "openai/gpt-4o-mini",
    provider: "openai",
    attempts: 1,
  });
  t.is(access.credits, batchRows.find((row) => row.requestId === output[0].id)?.credits);
  t.like(await accessOf(errors[0].id), { method: "BATCH", status: 400 });
  // gw usage tells batch lines and cache hits apart.
  const csv = await gw(["usage", "--agent", "budgeted", "--format", "csv", "--home", gateway.home]);
  t.is(csv.code, 0, csv.stderr);
  const [header, ...csvRows] = csv.stdout.trim().split("\n");
  const column = (name: string) => header!.split(",").indexOf(name);
  const lineCells = csvRows.map((row) => row.split(",")).filter((cells) => cells[column("batch")] === created.id);
  t.is(lineCells.length, 120);
  t.is(lineCells.filter((cells) => cells[column("cached")] === "true").length, 20);
  const table = await gw(["usage", "--agent", "budgeted", "--rows", "--home", gateway.home]);
  t.regex(table.stdout, /chat\.completions \(batch, cached\)/);
  // The batch price: half a live call's.
  await client(budgetKey).chat.completions.create({ model: "openai/gpt-4o-mini", max_tokens: 20, messages: [{ role: "user", content: "question 7" }] });
  const live = rows().at(-1);
  const line7 = batchRows.find((row) => row.requestId.endsWith("_7"));
  t.true((live?.credits ?? 0) > 1);
  t.is(line7?.credits, Math.round((live?.credits ?? 0) * 0.5));
});

test.serial("files and batches of another agent are answered 404, as missing ones", async (t) => {
  const batch = await submit([chatLine("only", "hello")]);
  const other = await addKey(gateway.home, "stranger", "pro");
  const strange = client(other);
  const foreign = await strange.batches.retrieve(batch.id).catch((error: unknown) => error);
  const missing = await strange.batches.retrieve("batch_01ARZ3NDEKTSV4RRFFQ69G5FAV").catch((error: unknown) => error);
  t.true(foreign instanceof OpenAI.NotFoundError);
  t.true(missing instanceof OpenAI.NotFoundError);
  t.is((await strange.batches.cancel(batch.id).catch((error: unknown) => error)) instanceof OpenAI.NotFoundError, true);
  const created = await strange.batches
    .create({ input_file_id: batch.input_file_id, endpoint: "/v1/chat/completions", completion_window: "24h" })
    .catch((error: unknown) => error);
  t.true(created instanceof OpenAI.BadRequestError);
  t.is((created as InstanceType<typeof OpenAI.BadRequestError>).param, "input_file_id");
  const listed = await strange.batches.list();
  t.deepEqual(listed.data, []);
  await ended(batch.id);
});

test.serial("a malformed input file fails the batch at once with every problem by line, and costs nothing", async (t) => {
  const before = rows().length;
  const batch = await submit([
    chatLine("a", "fine"),
    "{not json",
    chatLine("a", "the same custom_id"),
    JSON.stringify({ custom_id: "b", method: "GET", url: "/v1/chat/completions", body: {} }),
    JSON.stringify({ custom_id: "c", method: "POST", url: "/v1/embeddings", body: {} }),
    chatLine("d", "unknown model", { model: "nowhere/model" }),
    chatLine("e", "bad temperature", { temperature: 7 }),
    chatLine("f", "streamed", { stream: true }),
  ]);
  t.is(batch.status, "failed");
  t.truthy(batch.failed_at);
  const problems = batch.errors?.data ?? [];
  t.deepEqual(
    problems.map((problem) => [problem.line, problem.code]),
    [
      [2, "invalid_json_line"],
      [3, "duplicate_custom_id"],
      [4, "invalid_value"],
      [5, "invalid_url"],
      [6, "model_not_found"],
      [7, "invalid_parameter"],
      [8, "invalid_parameter"],
    ],
  );
  t.is(problems[4]?.param, "body.model");
  t.is(problems[5]?.param, "body.temperature");
  t.is(problems[6]?.param, "body.stream");
  t.is(rows().length, before, "nothing billed");
  const bad = await client()
    .batches.create({ input_file_id: batch.input_file_id, endpoint: "/v1/images/generations" as "/v1/chat/completions", completion_window: "24h" })
    .catch((error: unknown) => error);
  t.true(bad instanceof OpenAI.BadRequestError);
  t.is((bad as InstanceType<typeof OpenAI.BadRequestError>).param, "endpoint");
});

test.serial("list pages newest first; cancel stops new lines and keeps the answers so far", async (t) => {
  upstream.reset();
  // Every answer takes a while: the cancel lands while lines remain.
  upstream.set({ firstByteDelayMs: 150 });
  t.teardown(() => upstream.reset());
  const batch = await submit(Array.from({ length: 40 }, (_, index) => chatLine(`slow-${index}`, `slow ${index}`)));
  await eventually(() => client().batches.retrieve(batch.id), {
    what: "a first line answered",
    until: (current) => (current.request_counts?.completed ?? 0) >= 2,
  });
  const cancelling = await client().batches.cancel(batch.id);
  t.true(["cancelling", "cancelled"].includes(cancelling.status));
  const done = await ended(batch.id);
  t.is(done.status, "cancelled");
  t.truthy(done.cancelled_at);
  const output = await jsonl(done.output_file_id);
  const errors = await jsonl(done.error_file_id);
  t.true(output.length >= 2 && output.length < 40, `answered before the cancel: ${output.length}`);
  t.is(output.length + errors.length, 40);
  for (const line of errors) t.is(line.error.code, "batch_cancelled");
  t.is(rows().filter((row) => row.batch === batch.id).length, output.length, "only answered lines are billed");
  // Cancelling an ended batch: 409.
  const again = await client()
    .batches.cancel((await submit([chatLine("x", "y")]).then((created) => ended(created.id))).id)
    .catch((error: unknown) => error);
  t.true(again instanceof OpenAI.ConflictError);

  // A third batch of this test: pages of two have more to follow, whatever ran before.
  await ended((await submit([chatLine("z", "third")])).id);
  const page = await client().batches.list({ limit: 2 });
  t.is(page.data.length, 2);
  t.true(page.has_more);
  const all: string[] = [];
  for await (const listed of client().batches.list({ limit: 2 })) all.push(listed.id);
  t.deepEqual(all, [...all].sort().reverse(), "newest first");
  t.true(all.includes(batch.id));
});

test.serial("a cancel that comes once every line has started still ends the batch cancelled, with its answers", async (t) => {
  upstream.reset();
  upstream.set({ firstByteDelayMs: 300 });
  t.teardown(() => upstream.reset());
  const batch = await submit([chatLine("only-line", "the one line")]);
  await eventually(() => upstream.requests.filter((request) => request.path.endsWith("/chat/completions")).length, "the line to reach the upstream");
  await client().batches.cancel(batch.id);
  const done = await ended(batch.id);
  t.is(done.status, "cancelled");
  t.deepEqual(done.request_counts, { total: 1, completed: 1, failed: 0 });
  t.is((await jsonl(done.output_file_id)).length, 1);
});

test.serial("a key revoked while its batch runs runs no more lines; a batch past its window ends expired", async (t) => {
  upstream.reset();
  upstream.set({ firstByteDelayMs: 100 });
  t.teardown(() => upstream.reset());
  const revoked = await addKey(gateway.home, "revoking", "pro");
  const reader = await addKey(gateway.home, "revoking", "pro");
  const batch = await submit(
    Array.from({ length: 20 }, (_, index) => chatLine(`r-${index}`, `revoke ${index}`)),
    revoked,
  );
  await eventually(() => client(reader).batches.retrieve(batch.id), {
    what: "a line answered",
    until: (current) => (current.request_counts?.completed ?? 0) >= 1,
  });
  await revokeKey(gateway.gateway.store, revoked.slice(0, 11));
  const done = await ended(batch.id, reader);
  t.is(done.status, "completed");
  const output = await jsonl(done.output_file_id, reader);
  const errors = await jsonl(done.error_file_id, reader);
  t.true(output.length >= 1 && output.length < 20, `answered before the revoke: ${output.length}`);
  t.is(output.length + errors.length, 20);
  for (const line of errors) {
    t.is(line.response.status_code, 401);
    t.is(line.response.body.error.code, "invalid_api_key");
  }
  t.is(rows().filter((row) => row.batch === batch.id).length, output.length);

  const late = await submit(
    Array.from({ length: 20 }, (_, index) => chatLine(`e-${index}`, `expire ${index}`)),
    reader,
  );
  await eventually(() => client(reader).batches.retrieve(late.id), {
    what: "a line answered",
    until: (current) => (current.request_counts?.completed ?? 0) >= 1,
  });
  // The window ends now (as if 24 hours had passed).
  await gateway.gateway.state.batches.update(late.id, { expiresAt: Math.floor(Date.now() / 1000) - 1 });
  const expired = await ended(late.id, reader);
  t.is(expired.status, "expired");
  t.truthy(expired.expired_at);
  const unrun = await jsonl(expired.error_file_id, reader);
  t.true(unrun.length > 0);
  for (const line of unrun) t.is(line.error.code, "batch_expired");
  t.is((await jsonl(expired.output_file_id, reader)).length + unrun.length, 20);
});

test.serial("a batch is paced to its key's rate limit: lines over it wait, none fails", async (t) => {
  upstream.reset();
  const limited = await addKey(gateway.home, "paced", "pro", { rpm: 60 });
  // Rate limits are per key: the test reads the batch with another key of the agent.
  const reader = await addKey(gateway.home, "paced", "pro");
  const batch = await submit(
    Array.from({ length: 61 }, (_, index) => chatLine(`p-${index}`, `paced ${index}`)),
    limited,
  );
  const done = await ended(batch.id, reader);
  t.is(done.status, "completed");
  t.deepEqual(done.request_counts, { total: 61, completed: 61, failed: 0 });
  t.is(done.error_file_id as string | null | undefined, null);
  // The upload and the create took two of the 60: 58 lines at once, then one a second.
  t.true((done.completed_at ?? 0) - (done.in_progress_at ?? 0) >= 2, "the lines over the limit waited for it");
});

test("a gw SIGKILLed mid-batch finishes it after a restart: every line answered and billed once", async (t) => {
  const slow = await startFakeOpenAI({ firstByteDelayMs: 100 });
  t.teardown(() => slow.close());
  const home = await makeHome((config) => {
    configure(config, { batch: { concurrency: 3 } });
    config.providers.openai.baseUrl = slow.url;
  });
  const apiKey = await addKey(home, "restarted", "pro");
  const first = await spawnServe(home);
  const lines = Array.from({ length: 30 }, (_, index) => chatLine(`kill-${index}`, `kill ${index}`));
  const batch = await submit(lines, apiKey, `${first.url}/v1`);
  await eventually(() => client(apiKey, `${first.url}/v1`).batches.retrieve(batch.id), {
    what: "some lines answered",
    until: (current) => (current.request_counts?.completed ?? 0) >= 5,
  });
  first.child.kill("SIGKILL");
  await first.exited;

  const second = await spawnServe(home);
  t.teardown(async () => {
    second.child.kill("SIGTERM");
    await second.exited;
  });
  const done = await ended(batch.id, apiKey, `${second.url}/v1`);
  t.is(done.status, "completed");
  const output = await jsonl(done.output_file_id, apiKey, `${second.url}/v1`);
  const errors = await jsonl(done.error_file_id, apiKey, `${second.url}/v1`);
  t.is(output.length + errors.length, 30);
  t.deepEqual([...output, ...errors].map((line) => line.custom_id).sort(), lines.map((line) => JSON.parse(line).custom_id).sort());
  // A line billed just before the kill is never run again: lost at worst, never twice.
  for (const line of errors) t.is(line.response.body.error.code, "answer_lost");
  const billed = rows(home).filter((row) => row.batch === batch.id);
  t.is(new Set(billed.map((row) => row.id)).size, billed.length, "no line billed twice");
  t.is(billed.length, 30, "every line billed once");
  const answeredUpstream = slow.requests.filter((request) => request.path.endsWith("/chat/completions")).length;
  t.true(answeredUpstream >= 30);
  t.truthy(readFileSync(`${homePaths(home).dataDir}/batches/${batch.id}.json`, "utf8"));
});
