// `gw batch submit|list|status|cancel|results`, run as a user would (the built CLI in a
// subprocess) against a real gw whose chat route leads to the fake OpenAI upstream: the input is
// uploaded through /v1/files, the batch runs in gw's background runner, and the answers come back
// from the batch's output file. A second route leads through a gate that holds each request until
// the test lets it go, for batches that must still be running while the test looks at them
// (Ctrl-C, cancel, results asked too early).
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import test from "ava";
import { batchProgress, PLAIN_LINE_GAP_MS } from "../src/cli/batch-progress.js";
import type { BatchBody, BatchListBody } from "../src/client/batch-types.js";
import type { GwResult } from "./_gw-cli.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, gw, gwBin, json, makeHome, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { tempDir } from "./helpers/temp-dirs.js";

let upstream: FakeOpenAI;
/** In front of a second fake: holds each request until the test releases it (by a tag in its body). */
let gate: HoldingGate;
let gateUpstream: FakeOpenAI;
let gateway: TestGateway;
let key: string;

interface HoldingGate {
  url: string;
  /** Let the held requests whose body holds `tag` through, and every later one. */
  release(tag: string): void;
  close(): Promise<void>;
}

/**
 * A pass-through to `target` (the fake's origin) that holds each request until its tag is
 * released: the batches routed here are still running, for certain, while a test looks at them.
 */
async function startHoldingGate(target: string): Promise<HoldingGate> {
  const released = new Set<string>();
  const held: Array<{ body: string; pass: () => void }> = [];
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    if (![...released].some((tag) => body.includes(tag))) await new Promise<void>((pass) => held.push({ body, pass }));
    const answer = await fetch(new URL(request.url ?? "/", target), {
      method: request.method,
      headers: { "content-type": request.headers["content-type"] ?? "application/json", authorization: String(request.headers.authorization ?? "") },
      body: request.method === "GET" ? undefined : body,
    });
    response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
    response.end(await answer.text());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    release(tag) {
      released.add(tag);
      for (const request of held.filter((entry) => entry.body.includes(tag))) {
        held.splice(held.indexOf(request), 1);
        request.pass();
      }
    },
    async close() {
      for (const request of held.splice(0)) request.pass();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test.before(async () => {
  upstream = await startFakeOpenAI();
  gateUpstream = await startFakeOpenAI();
  gate = await startHoldingGate(new URL(gateUpstream.url).origin);
  const home = await makeHome((config: RawConfig) => {
    config.upstream = { retries: 0, breakerFailureThreshold: 0 };
    config.providers = {
      openai: { type: "openai", baseUrl: upstream.url, apiKey: "sk-batch-upstream" },
      held: { type: "openai", baseUrl: gate.url, apiKey: "sk-batch-held" },
    };
    config.routes = [
      { prefix: "openai/", provider: "openai" },
      { prefix: "held/", provider: "held" },
    ];
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "batcher", "pro");
});

test.after.always(async () => {
  await gate?.close();
  await gateway?.shutdown();
  await upstream?.close();
  await gateUpstream?.close();
});

/** `gw` as the user runs it, with their gateway address and key, in a folder of their own. */
function gwUser(args: string[], options: { cwd?: string; input?: string; apiKey?: string } = {}): Promise<GwResult> {
  return gw(args, { env: { GW_BASE_URL: gateway.url, GW_API_KEY: options.apiKey ?? key }, cwd: options.cwd, input: options.input });
}

function requestLine(customId: string, content: string, model = "openai/gpt-4o-mini"): string {
  return JSON.stringify({ custom_id: customId, method: "POST", url: "/v1/chat/completions", body: { model, messages: [{ role: "user", content }] } });
}

interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; body: { choices: Array<{ message: { content: string } }> } } | null;
  error: unknown;
}

function outputLines(text: string): OutputLine[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as OutputLine);
}

function answers(text: string): Record<string, string | undefined> {
  return Object.fromEntries(outputLines(text).map((line) => [line.custom_id, line.response?.body.choices[0]?.message.content]));
}

/** The id `gw batch submit` printed: its only line on stdout. */
function batchIdOf(result: GwResult): string {
  const id = result.stdout.trim();
  if (!/^batch_\S+$/.test(id)) throw new Error(`no batch id on stdout (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`);
  return id;
}

/** Every chat request the fake received whose last user message is `content`. */
function upstreamBodies(fake: FakeOpenAI, content: string): Array<Record<string, any>> {
  return fake.requests
    .filter((request) => request.method === "POST" && request.path.endsWith("/chat/completions"))
    .map((request) => request.body as Record<string, any>)
    .filter((body) => body.messages?.at(-1)?.content === content);
}

test("submit FILE --wait: the batch id on stdout, exit 0 when it completed, and results hold every custom_id with the upstream's answer", async (t) => {
  const folder = tempDir("gw-batch-");
  const prompts = { alpha: `first ${Math.random()}`, beta: `second ${Math.random()}`, gamma: `third ${Math.random()}` };
  writeFileSync(
    path.join(folder, "requests.jsonl"),
    `${Object.entries(prompts)
      .map(([id, content]) => requestLine(id, content))
      .join("\n")}\n`,
  );

  const submitted = await gwUser(["batch", "submit", "requests.jsonl", "--wait"], { cwd: folder });
  t.is(submitted.code, 0, submitted.stderr);
  const id = batchIdOf(submitted);
  t.regex(submitted.stderr, new RegExp(`${id} completed: 3 done, 0 failed of 3`));
  for (const content of Object.values(prompts)) t.is(upstreamBodies(upstream, content).length, 1, `one upstream call for ${content}`);

  const results = await gwUser(["batch", "results", id]);
  t.is(results.code, 0, results.stderr);
  t.deepEqual(answers(results.stdout), { alpha: `echo: ${prompts.alpha}`, beta: `echo: ${prompts.beta}`, gamma: `echo: ${prompts.gamma}` });
  t.deepEqual(
    outputLines(results.stdout).map((line) => line.custom_id),
    ["alpha", "beta", "gamma"],
    "in the input's order",
  );

  const errors = await gwUser(["batch", "results", id, "--errors"]);
  t.is(errors.code, 1);
  t.regex(errors.stderr, /no error file: no line failed/);
});

test("submit - reads the JSONL from stdin; --json prints the batch object as the API answers it", async (t) => {
  const content = `from stdin ${Math.random()}`;
  const submitted = await gwUser(["batch", "submit", "-", "--metadata", "job=nightly", "--metadata", "owner=ops", "--json"], {
    input: `${requestLine("only", content)}\n`,
  });
  t.is(submitted.code, 0, submitted.stderr);
  const batch = json<BatchBody>(submitted);
  t.is(batch.object, "batch");
  t.regex(batch.id, /^batch_/);
  t.is(batch.endpoint, "/v1/chat/completions");
  t.is(batch.completion_window, "24h");
  t.deepEqual(batch.metadata, { job: "nightly", owner: "ops" });
  t.is(batch.request_counts.total, 1);

  const followed = await gwUser(["batch", "status", batch.id, "--wait", "--json"]);
  t.is(followed.code, 0, followed.stderr);
  const ended = json<BatchBody>(followed);
  t.is(ended.status, "completed");
  t.deepEqual(ended.request_counts, { total: 1, completed: 1, failed: 0 });
  t.truthy(ended.output_file_id);
});

test("submit --model --prompts: one chat request per non-empty line, custom_id line-<n>, with the system message, max_tokens and temperature", async (t) => {
  const folder = tempDir("gw-batch-");
  const tag = Math.random();
  writeFileSync(path.join(folder, "prompts.txt"), `one ${tag}\n\ntwo ${tag}\n   \nthree ${tag}\n`);

  const submitted = await gwUser(
    [
      "batch",
      "submit",
      "--model",
      "openai/gpt-4o-mini",
      "--prompts",
      "prompts.txt",
      "--system",
      "Answer briefly.",
      "--max-tokens",
      "50",
      "--temperature",
      "0.5",
      "--wait",
      "--json",
    ],
    { cwd: folder },
  );
  t.is(submitted.code, 0, submitted.stderr);
  const batch = json<BatchBody>(submitted);
  t.is(batch.status, "completed");
  t.deepEqual(batch.request_counts, { total: 3, completed: 3, failed: 0 });

  const sent = upstreamBodies(upstream, `two ${tag}`);
  t.is(sent.length, 1);
  t.deepEqual(sent[0]!.messages, [
    { role: "system", content: "Answer briefly." },
    { role: "user", content: `two ${tag}` },
  ]);
  t.is(sent[0]!.temperature, 0.5);
  t.true(sent[0]!.max_tokens === 50 || sent[0]!.max_completion_tokens === 50, "the cap reaches the upstream");

  const saved = await gwUser(["batch", "results", batch.id, "-o", "answers.jsonl", "--json"], { cwd: folder });
  t.is(saved.code, 0, saved.stderr);
  const written = readFileSync(path.join(folder, "answers.jsonl"), "utf8");
  t.deepEqual(answers(written), { "line-1": `echo: one ${tag}`, "line-3": `echo: two ${tag}`, "line-5": `echo: three ${tag}` });
  const report = json<{ id: string; file_id: string; kind: string; path: string; bytes: number }>(saved);
  t.deepEqual(report, { id: batch.id, file_id: batch.output_file_id!, kind: "output", path: "answers.jsonl", bytes: Buffer.byteLength(written) });
  t.deepEqual(readdirSync(folder).sort(), ["answers.jsonl", "prompts.txt"], "no temporary file left beside it");
});

test("submit --prompts - reads the prompts from stdin", async (t) => {
  const tag = Math.random();
  const submitted = await gwUser(["batch", "submit", "--model", "openai/gpt-4o-mini", "--prompts", "-", "--wait"], { input: `a ${tag}\nb ${tag}\n` });
  t.is(submitted.code, 0, submitted.stderr);
  const results = await gwUser(["batch", "results", batchIdOf(submitted)]);
  t.deepEqual(answers(results.stdout), { "line-1": `echo: a ${tag}`, "line-2": `echo: b ${tag}` });
});

test("a malformed input fails the batch at once: each problem with its line on stderr, non-zero exit, no upstream call", async (t) => {
  const folder = tempDir("gw-batch-");
  const content = `never sent ${Math.random()}`;
  const lines = [
    requestLine("fine", content),
    "{not json",
    JSON.stringify({ custom_id: "get", method: "GET", url: "/v1/chat/completions", body: {} }),
    requestLine("fine", `${content} again`),
  ];
  writeFileSync(path.join(folder, "bad.jsonl"), `${lines.join("\n")}\n`);

  const submitted = await gwUser(["batch", "submit", "bad.jsonl", "--wait"], { cwd: folder });
  t.is(submitted.code, 1);
  t.is(submitted.stdout, "", "no batch id for a batch that failed");
  t.regex(submitted.stderr, /failed: its input has problems, and nothing ran/);
  t.regex(submitted.stderr, /line 2: .*\(invalid_json_line\)/);
  t.regex(submitted.stderr, /line 3: .*method/);
  t.regex(submitted.stderr, /line 4: .*\(duplicate_custom_id, custom_id\)/);
  t.notRegex(submitted.stderr, /line 1:/);
  t.is(upstreamBodies(upstream, content).length, 0);

  const asJson = await gwUser(["batch", "submit", "bad.jsonl", "--json"], { cwd: folder });
  t.is(asJson.code, 1);
  const batch = json<BatchBody>(asJson);
  t.is(batch.status, "failed");
  t.deepEqual(
    batch.errors?.data.map((problem) => problem.line),
    [2, 3, 4],
  );

  const results = await gwUser(["batch", "results", batch.id]);
  t.is(results.code, 1);
  t.regex(results.stderr, /failed before any line ran/);
});

test("usage errors exit 2 before anything is sent: FILE with --prompts, neither, --prompts without --model, a prompt flag without --prompts, bad --metadata", async (t) => {
  const folder = tempDir("gw-batch-");
  writeFileSync(path.join(folder, "prompts.txt"), "hello\n");
  const cases: Array<[string[], RegExp]> = [
    [["batch", "submit", "prompts.txt", "--prompts", "prompts.txt", "--model", "openai/gpt-4o-mini"], /FILE or --prompts, not both/],
    [["batch", "submit"], /give the JSONL FILE/],
    [["batch", "submit", "--prompts", "prompts.txt"], /--prompts needs --model/],
    [["batch", "submit", "requests.jsonl", "--model", "openai/gpt-4o-mini"], /--model goes with --prompts/],
    [["batch", "submit", "requests.jsonl", "--metadata", "novalue"], /--metadata takes key=value/],
    [["batch", "submit", "--prompts", "prompts.txt", "--model", "m", "--endpoint", "/v1/embeddings"], /drop --endpoint/],
    [["batch", "results", "batch_x", "--json"], /pass -o FILE with --json/],
  ];
  for (const [args, message] of cases) {
    // Nothing listens there: a command that sent anything would fail with exit 1 instead.
    const result = await gw(args, { cwd: folder, env: { GW_BASE_URL: "http://127.0.0.1:9", GW_API_KEY: key } });
    t.is(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    t.regex(result.stderr, message, args.join(" "));
  }
});

test("list, status and cancel: a running batch is listed newest first, shown, cancelled; waiting on it then exits non-zero saying so", async (t) => {
  const listKey = await addKey(gateway.home, `lister-${Math.random()}`, "pro");
  const folder = tempDir("gw-batch-");
  writeFileSync(path.join(folder, "first.jsonl"), `${requestLine("x", `quick ${Math.random()}`)}\n`);
  const tag = `held-${Math.random()}`;
  // More lines than a batch runs at once (batch.concurrency, 4): the cancel finds lines not started.
  const heldLines = [1, 2, 3, 4, 5, 6].map((n) => requestLine(`s${n}`, `${tag} ${n}`, "held/gpt-4o-mini"));
  writeFileSync(path.join(folder, "slow.jsonl"), `${heldLines.join("\n")}\n`);
  const first = batchIdOf(await gwUser(["batch", "submit", "first.jsonl"], { cwd: folder, apiKey: listKey }));
  const running = batchIdOf(await gwUser(["batch", "submit", "slow.jsonl", "--metadata", "purpose=test"], { cwd: folder, apiKey: listKey }));

  const listed = await gwUser(["batch", "list", "--json"], { apiKey: listKey });
  t.is(listed.code, 0, listed.stderr);
  const list = json<BatchListBody>(listed);
  t.deepEqual(
    list.data.map((batch) => batch.id),
    [running, first],
    "this agent's batches, newest first",
  );
  const table = await gwUser(["batch", "ls"], { apiKey: listKey });
  t.is(table.code, 0, table.stderr);
  const rows = table.stdout.trim().split("\n");
  t.regex(rows[0]!, /^ID\s+STATUS\s+DONE\s+FAILED\s+TOTAL\s+CREATED\s+ENDPOINT$/);
  t.regex(rows[1]!, new RegExp(`^${running}\\s+in_progress\\s+0\\s+0\\s+6\\s+.*/v1/chat/completions$`));
  t.true(rows[2]!.startsWith(first));
  const others = await gwUser(["batch", "list", "--json"]);
  t.false(
    json<BatchListBody>(others).data.some((batch) => batch.id === running),
    "another agent's list does not show it",
  );

  const shown = await gwUser(["batch", "status", running], { apiKey: listKey });
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, new RegExp(`^id\\s+${running}$`, "m"));
  t.regex(shown.stdout, /^status\s+in_progress$/m);
  t.regex(shown.stdout, /^requests\s+0 done, 0 failed of 6$/m);
  t.regex(shown.stdout, /^metadata\s+purpose=test$/m);
  t.regex(shown.stdout, /^input\s+file_/m);
  const early = await gwUser(["batch", "results", running], { apiKey: listKey });
  t.is(early.code, 1);
  t.regex(early.stderr, new RegExp(`is in_progress .*its results come when it ends: gw batch status ${running} --wait`));

  const cancelled = await gwUser(["batch", "cancel", running, "--json"], { apiKey: listKey });
  t.is(cancelled.code, 0, cancelled.stderr);
  t.is(json<BatchBody>(cancelled).status, "cancelling", "the lines in flight are still held");
  // They finish (the cancel lets them), and the batch ends cancelled with their answers.
  gate.release(tag);
  const followed = await gwUser(["batch", "status", running, "--wait", "--json"], { apiKey: listKey });
  t.is(followed.code, 1);
  t.is(json<BatchBody>(followed).status, "cancelled");
  t.regex(followed.stderr, new RegExp(`the batch ${running} was cancelled`));
  t.regex(followed.stderr, new RegExp(`what it answered: gw batch results ${running}`));

  await eventually(
    async () => (await gwUser(["batch", "status", first, "--json"], { apiKey: listKey })).stdout.includes('"completed"'),
    "the first batch completed",
  );
  const refused = await gwUser(["batch", "cancel", first], { apiKey: listKey });
  t.is(refused.code, 1, refused.stderr);
  t.regex(refused.stderr, /already ended/);
});

test("Ctrl-C while waiting leaves the batch running, says how to follow it, and exits 130", async (t) => {
  const folder = tempDir("gw-batch-");
  const tag = `interrupted-${Math.random()}`;
  writeFileSync(path.join(folder, "slow.jsonl"), `${requestLine("s", tag, "held/gpt-4o-mini")}\n`);
  const child = spawn(process.execPath, [gwBin, "batch", "submit", "slow.jsonl", "--wait"], {
    cwd: folder,
    env: { ...withoutTestEnv(), GW_BASE_URL: gateway.url, GW_API_KEY: key },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  // The first progress line (not a terminal: a plain line) comes once the batch exists and the wait began.
  await eventually(() => /in_progress/.test(stderr), { what: "the first progress line", timeoutMs: 60_000 });
  child.kill("SIGINT");
  t.is(await exited, 130, stderr);
  const id = stdout.trim();
  t.regex(id, /^batch_/);
  t.regex(stderr, new RegExp(`stopped waiting; the batch ${id} goes on at the gateway`));
  t.regex(stderr, new RegExp(`gw batch status ${id} --wait`));
  t.regex(stderr, new RegExp(`gw batch results ${id}`));

  t.is(json<BatchBody>(await gwUser(["batch", "status", id, "--json"])).status, "in_progress", "not cancelled");
  gate.release(tag);
  const followed = await gwUser(["batch", "status", id, "--wait"]);
  t.is(followed.code, 0, followed.stderr);
  t.deepEqual(answers((await gwUser(["batch", "results", id])).stdout), { s: `echo: ${tag}` });
});

function withoutTestEnv(): NodeJS.ProcessEnv {
  // As test/_gw-cli.ts: a user's shell runs the built commands, with no key or address of its own.
  const env = { ...process.env };
  delete env.NODE_ENV;
  delete env.GW_API_KEY;
  delete env.GW_BASE_URL;
  return env;
}

/** A stream that records what is written, as a terminal (isTTY) or not. */
function recordingStream(isTTY: boolean): NodeJS.WriteStream & { text: () => string } {
  let text = "";
  return {
    isTTY,
    columns: 200,
    write(chunk: string) {
      text += chunk;
      return true;
    },
    text: () => text,
  } as unknown as NodeJS.WriteStream & { text: () => string };
}

function batchAt(status: BatchBody["status"], completed: number, failed: number, total: number): BatchBody {
  return { id: "batch_1", status, request_counts: { completed, failed, total } } as BatchBody;
}

test("progress on a terminal: one line rewritten in place with done, failed, total, the rate and the time left; erased at the end", (t) => {
  let now = 0;
  const stream = recordingStream(true);
  const progress = batchProgress("batch_1", stream, () => now);
  progress.update(batchAt("in_progress", 0, 0, 100));
  now = 10_000;
  progress.update(batchAt("in_progress", 18, 2, 100));
  t.true(stream.text().endsWith("\r\x1b[2Kbatch_1  in_progress  18 done, 2 failed of 100  2.0 lines/s  ETA 0:40"), JSON.stringify(stream.text()));
  progress.end();
  t.true(stream.text().endsWith("\r\x1b[2K"));
  t.false(stream.text().includes("\n"), "no line of its own is left on the screen");
});

test("progress to a log: a line when the status changes, and for new counts at most every few seconds", (t) => {
  let now = 0;
  const stream = recordingStream(false);
  const progress = batchProgress("batch_1", stream, () => now);
  progress.update(batchAt("in_progress", 0, 0, 10));
  now = 1000;
  progress.update(batchAt("in_progress", 3, 0, 10));
  now = PLAIN_LINE_GAP_MS;
  progress.update(batchAt("in_progress", 3, 0, 10));
  now = PLAIN_LINE_GAP_MS + 1000;
  progress.update(batchAt("in_progress", 5, 0, 10));
  now = 2 * PLAIN_LINE_GAP_MS + 1000;
  progress.update(batchAt("finalizing", 10, 0, 10));
  progress.update(batchAt("completed", 10, 0, 10));
  progress.end();
  t.deepEqual(stream.text().split("\n"), [
    "batch_1  in_progress  0 done, 0 failed of 10",
    "batch_1  in_progress  3 done, 0 failed of 10  0.6 lines/s  ETA 0:11",
    "batch_1  finalizing  10 done, 0 failed of 10  0.9 lines/s",
    "",
  ]);
});
