// `gw image generate --batch` as a user runs it: the built CLI against a running gw whose OpenAI
// Images fake sits behind a counting proxy (test/helpers/upstream-gate.ts), so concurrency is
// observed and steered by holding requests, never by timing.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "ava";
import sharp from "sharp";
import type { BatchResult } from "../src/cli/image-batch.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, gw, gwBin, json, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { startUpstreamGate, type UpstreamGate } from "./helpers/upstream-gate.js";

let openai: FakeOpenAIImages;
let gate: UpstreamGate;
let gateway: TestGateway;
let home: string;
let key: string;
const directories: string[] = [];

test.before(async () => {
  openai = await startFakeOpenAIImages();
  gate = await startUpstreamGate(openai.url);
  home = await makeHome((config) => {
    config.providers = { openai: { type: "openai", baseUrl: gate.url, apiKey: "test-key", upstream: { retries: 0 } } };
    config.tools.image = { default: "openai/gpt-image-1", allow: ["openai/gpt-image-1"] };
  });
  key = await addKey(home, "batcher", "pro");
  gateway = await startTestGateway(home);
});

test.after.always(async () => {
  await gateway?.shutdown();
  await gate?.close();
  await openai?.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

const env = () => ({ GW_BASE_URL: gateway.url, GW_API_KEY: key, GW_HOME: home });

function workDir(): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), "gw-image-batch-"));
  directories.push(directory);
  return directory;
}

function resultLines(stdout: string): BatchResult[] {
  return stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as BatchResult);
}

/** The upstream request whose prompt starts with `prompt` (the gateway may append role hints). */
const sentFor = (prompt: string) => openai.requests.find((request) => request.json?.prompt === prompt)?.json;

test.serial("a batch: every line runs, failures are result lines, files decode, at most --concurrency in flight", async (t) => {
  const cwd = workDir();
  const batch = [
    JSON.stringify({ prompt: "batch fox", output_format: "png", size: "1024x1024" }),
    JSON.stringify({ prompt: "batch two foxes", n: 2, aspect_ratio: "3:2", output_format: "jpeg", quality: "high" }),
    JSON.stringify({ prompt: "batch bad ratio", aspect_ratio: "7:3" }),
    "",
    "this line is not JSON",
    JSON.stringify({ prompt: "batch owl", aspect_ratio: "2:3" }),
  ].join("\n");
  writeFileSync(path.join(cwd, "prompts.jsonl"), `${batch}\n`);
  openai.reset();
  gate.resetCounts();
  // The first two lines are held at the upstream until both are there: proof that two run at once.
  gate.holdUntil(2);

  const result = await gw(["image", "generate", "--batch", "prompts.jsonl", "--concurrency", "2", "--quality", "low", "-o", "out"], { env: env(), cwd });
  t.is(result.code, 1, result.stderr);
  t.is(gate.maxInFlight(), 2);

  const lines = resultLines(result.stdout);
  t.deepEqual(
    lines.map((line) => [line.line, line.status]),
    [
      [1, "ok"],
      [2, "ok"],
      [3, "error"],
      [5, "error"],
      [6, "ok"],
    ],
    "one line per request, in input order, blank lines skipped but counted",
  );
  const [fox, foxes, bad, notJson, owl] = lines as [BatchResult, BatchResult, BatchResult, BatchResult, BatchResult];
  t.deepEqual(fox.files, [path.join("out", "1-1.png")]);
  t.deepEqual(foxes.files, [path.join("out", "2-1.jpg"), path.join("out", "2-2.jpg")]);
  t.deepEqual(owl.files, [path.join("out", "6-1.webp")]);
  t.is(fox.model, "openai/gpt-image-1");
  t.truthy(fox.id);
  t.is(bad.http_status, 400);
  t.regex(bad.error ?? "", /aspect_ratio/);
  t.is(bad.files, undefined);
  t.regex(notJson.error ?? "", /not JSON/);

  const expected: Array<[string, string, number, number]> = [
    ["1-1.png", "png", 1024, 1024],
    ["2-1.jpg", "jpeg", 1536, 1024],
    ["2-2.jpg", "jpeg", 1536, 1024],
    ["6-1.webp", "webp", 1024, 1536],
  ];
  t.deepEqual(readdirSync(path.join(cwd, "out")).sort(), expected.map(([name]) => name).sort());
  for (const [name, format, width, height] of expected) {
    const meta = await sharp(path.join(cwd, "out", name)).metadata();
    t.deepEqual([meta.format, meta.width, meta.height], [format, width, height], name);
  }

  // Flags are defaults; a line's own field wins.
  t.is(sentFor("batch fox")?.quality, "low");
  t.is(sentFor("batch two foxes")?.quality, "high");
  t.is(openai.requests.length, 3, "the refused line never reached the upstream");

  // Not a terminal: stderr carries the errors only, no progress bar.
  t.regex(result.stderr, /^line 3: .*aspect_ratio/m);
  t.regex(result.stderr, /^line 5: not JSON/m);
  t.regex(result.stderr, /2 of 5 requests failed/);
  t.notRegex(result.stderr, /\[#|\r/);

  const assetIds = [fox, foxes, owl].flatMap((line) => line.asset_ids ?? []);
  t.is(assetIds.length, 4);
  const listed = await gw(["storage", "ls", "--json", "--limit", "100"], { env: env() });
  t.is(listed.code, 0, listed.stderr);
  const stored = new Set(json<{ data: Array<{ id: string }> }>(listed).data.map((file) => file.id));
  for (const id of assetIds) t.true(stored.has(id), id);
});

test.serial("--batch - reads stdin; an `output` field names the file and its extension asks for the format", async (t) => {
  const cwd = workDir();
  const input = [JSON.stringify({ prompt: "stdin hero", output: "hero.png" }), JSON.stringify({ prompt: "stdin pair", n: 2, output: "pair" })].join("\r\n");
  const result = await gw(["image", "generate", "--batch", "-", "--format", "webp"], { env: env(), cwd, input });
  t.is(result.code, 0, result.stderr);
  t.is(result.stderr, "");
  const lines = resultLines(result.stdout);
  t.deepEqual(
    lines.map((line) => [line.line, line.status, line.files]),
    [
      [1, "ok", ["hero.png"]],
      [2, "ok", ["pair-1.webp", "pair-2.webp"]],
    ],
  );
  t.is((await sharp(path.join(cwd, "hero.png")).metadata()).format, "png");
  t.is((await sharp(path.join(cwd, "pair-2.webp")).metadata()).format, "webp");
  t.is(sentFor("stdin hero")?.output_format, "png");
  t.false("output" in (sentFor("stdin hero") ?? {}), "`output` is the CLI's, not sent");
});

test.serial("an `output` with a directory or a format that disagrees fails that line only", async (t) => {
  const cwd = workDir();
  const input = [
    JSON.stringify({ prompt: "escape", output: "../outside" }),
    JSON.stringify({ prompt: "disagree", output: "x.png", output_format: "jpeg" }),
    JSON.stringify({ prompt: "fine one" }),
  ].join("\n");
  const requestsBefore = openai.requests.length;
  const result = await gw(["image", "generate", "--batch", "-", "-o", "."], { env: env(), cwd, input });
  t.is(result.code, 1);
  const lines = resultLines(result.stdout);
  t.deepEqual(
    lines.map((line) => line.status),
    ["error", "error", "ok"],
  );
  t.regex(lines[0]!.error ?? "", /without a directory/);
  t.regex(lines[1]!.error ?? "", /make them agree/);
  t.is(openai.requests.length, requestsBefore + 1);
  t.deepEqual(readdirSync(cwd), ["3-1.webp"]);
});

test.serial("Ctrl-C stops starting new lines, lets the one in flight finish and reports the rest as skipped", async (t) => {
  const cwd = workDir();
  const input = ["sigint one", "sigint two", "sigint three"].map((prompt) => JSON.stringify({ prompt })).join("\n");
  const requestsBefore = openai.requests.length;
  gate.holdAll();
  const child = spawnGw(["image", "generate", "--batch", "-", "--concurrency", "1"], cwd, input);
  try {
    await eventually(() => gate.held() === 1, "the first request held at the gate");
    child.process.kill("SIGINT");
    await eventually(() => child.stderr().includes("interrupted"), "the CLI to say it was interrupted");
  } finally {
    gate.release();
  }
  const code = await child.exited;
  t.is(code, 130, child.stderr());
  const lines = resultLines(child.stdout());
  t.deepEqual(
    lines.map((line) => [line.line, line.status]),
    [
      [1, "ok"],
      [2, "skipped"],
      [3, "skipped"],
    ],
  );
  t.is(openai.requests.length, requestsBefore + 1);
  t.deepEqual(readdirSync(cwd), ["1-1.webp"]);
  t.regex(child.stderr(), /2 of 3 requests not sent/);
});

test.serial("--batch refuses a PROMPT, -o -, and a missing file, before any request", async (t) => {
  const cwd = workDir();
  const requestsBefore = openai.requests.length;
  const withPrompt = await gw(["image", "generate", "a fox", "--batch", "x.jsonl"], { env: env(), cwd });
  t.not(withPrompt.code, 0);
  t.regex(withPrompt.stderr, /drop the PROMPT/);
  const toStdout = await gw(["image", "generate", "--batch", "x.jsonl", "-o", "-"], { env: env(), cwd });
  t.not(toStdout.code, 0);
  t.regex(toStdout.stderr, /-o - is not possible/);
  const missing = await gw(["image", "generate", "--batch", "missing.jsonl"], { env: env(), cwd });
  t.not(missing.code, 0);
  t.regex(missing.stderr, /missing\.jsonl: no such file/);
  const concurrency = await gw(["image", "generate", "--batch", "-", "--concurrency", "0"], { env: env(), cwd, input: "" });
  t.not(concurrency.code, 0);
  t.is(openai.requests.length, requestsBefore);
  t.deepEqual(readdirSync(cwd), []);
});

/** The CLI as a child whose output can be watched while it runs (gw() waits for the end). */
function spawnGw(args: string[], cwd: string, input: string) {
  const environment: NodeJS.ProcessEnv = { ...process.env, ...env() };
  delete environment.NODE_ENV;
  const child = spawn(process.execPath, [gwBin, ...args], { env: environment, cwd, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  child.stdin.end(input);
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { process: child, stdout: () => stdout, stderr: () => stderr, exited };
}
