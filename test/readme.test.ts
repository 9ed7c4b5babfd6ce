// The README's walk-through, run as a reader would: every shell block marked `<!-- readme-test -->`
// (or `<!-- readme-test exit=N -->` for a block the README says fails) runs in order with
// `bash -euo pipefail`, in a fresh home, with `gw` on PATH, against a `gw serve` started the way
// the Quick start says. A block of another kind marked `<!-- readme-test file=PATH -->` (a client's
// config file, a script) is written, in its place in that order, to PATH in the blocks' working
// directory (`~/` the reader's home), for the shell blocks after it to use. A wrong command, flag,
// path or setting in a marked block fails this test.
//
// What differs from a reader's machine, and why:
// - The server listens on a free port, written to config.json's server.port before its first
//   start (so parallel runs, or a gw on 8787, do not collide, and `gw` commands reach it by the
//   home's address exactly as they reach 8787 for the reader); `127.0.0.1:8787` in a block is
//   read as that address.
// - No real vendor is called and there are no vendor keys: the server gets placeholder values
//   for the `${NAME}` keys the README tells the reader to export before `gw serve`, and before each
//   block every provider the README configured is pointed at a local fake of its vendor
//   (test/fakes) with `gw providers set NAME --base-url FAKE`; the test waits until the running
//   server has reloaded that change. A provider type without a fake fails the test rather than
//   reach the internet, and so would a block that adds a provider and calls it at once (the call
//   fails without a key or a network, and the check below sees it).
// - The reader's files the storage and image blocks name (report.pdf, photos/*.jpg, big.bin,
//   a.png) are made in the blocks' working directory.
// - Blocks share what they `export` (as one terminal session would); nothing else.
// - The clients the README configures are the real ones the project installs: `codex` and
//   `claude` are on PATH, and the working directory's node_modules is the project's (as if the
//   reader had run the README's `npm install`). Nothing they do may leave the machine: Claude Code
//   runs with telemetry, error reporting, the auto-updater and non-essential traffic off (in the
//   environment), and `~/.codex/config.toml` gets Codex's update check, analytics and plugin
//   catalog turned off around the README's text. Both would otherwise call their vendor's servers.
// - `curl -s` exits 0 on an HTTP error, so every response the server logged during a block that
//   should succeed must be below 400.
//
// GW_README=path runs another copy of the README (to check that a broken command fails here).
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import type net from "node:net";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import test from "ava";
import { type FakeAnthropic, startFakeAnthropic } from "./fakes/anthropic.js";
import { type FakeGemini, startFakeGemini } from "./fakes/gemini.js";
import { jpegFile, pngFile } from "./fakes/image-files.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { type FakeOpenAIAudio, startFakeOpenAIAudio } from "./fakes/openai-audio.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { type FakeSearxng, startFakeSearxng } from "./fakes/searxng.js";
import { eventually } from "./helpers/eventually.js";
import { freePort } from "./helpers/free-port.js";
import { claudeBinary, claudeCodeOfflineEnv, codexOfflineConfig, codexScript } from "./helpers/real-clients.js";
import { type RunResult, runCommand } from "./helpers/run-command.js";

const repo = path.resolve(import.meta.dirname, "..");
const readmePath = process.env.GW_README ? path.resolve(process.env.GW_README) : path.join(repo, "README.md");

interface ReadmeBlock {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  /** The exit status the README says the block ends with. */
  exit: number;
  /** For a `file=PATH` block: where it is written instead of run. */
  file?: string;
}

/** The marked blocks, in order. A shell marker not followed by a shell fence, or a file marker by no fence, is an error. */
function runnableBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split("\n");
  const blocks: ReadmeBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (!line.includes("readme-test")) continue;
    const mark = /^<!-- readme-test(?: exit=(\d+)| file=(\S+))? -->$/.exec(line.trim());
    if (!mark)
      throw new Error(
        `README line ${index + 1}: malformed marker ${JSON.stringify(line)} (<!-- readme-test -->, <!-- readme-test exit=N --> or <!-- readme-test file=PATH -->)`,
      );
    const file = mark[2];
    if (!(file ? /^```[a-z]*$/ : /^```(bash|sh)$/).test(lines[index + 1] ?? ""))
      throw new Error(`README line ${index + 1}: a readme-test marker must be followed by a ${file ? "code" : "```bash"} fence`);
    const end = lines.indexOf("```", index + 2);
    if (end < 0) throw new Error(`README line ${index + 2}: unclosed fence`);
    blocks.push({ line: index + 2, code: lines.slice(index + 2, end).join("\n"), exit: mark[1] ? Number(mark[1]) : 0, file });
    index = end;
  }
  return blocks;
}

const blocks = runnableBlocks(readFileSync(readmePath, "utf8"));

/** What the walk-through must keep covering: unmarking a block must not quietly drop these. */
const COVERED = [
  "gw providers add",
  "gw providers set",
  "gw routes add auto",
  "gw routes set",
  "gw keys create",
  "gw keys set",
  "gw cache stats",
  "gw cache clear",
  "gw batch submit",
  "gw agents create",
  "gw plans set",
  "gw plans remove",
  "gw usage",
  "gw backup",
  "gw restore",
  "gw embed",
  "gw service unit",
  "$GW/v1/chat/completions",
  "gw chat",
  "gw models",
  "gw storage upload",
  "gw storage list",
  "gw storage get",
  "gw storage url",
  "gw storage remove",
  "gw storage quota",
  "gw doctor",
  "gw audio speak",
  "gw audio transcribe",
  "gw audio voices",
  "$GW/v1/audio/speech",
  "$GW/v1/audio/transcriptions",
  "$GW/v1/video/generations",
  "gw video generate",
  "gw search",
  "$GW/v1/search",
  "gw help",
  "$GW/health",
  "export GW=",
  "export GW_API_KEY=",
  "createOpenAI(",
  "setDefaultOpenAIClient(",
  "client.responses.create(",
  "previous_response_id",
  "node ai-sdk.mjs",
  'wire_api = "responses"',
  "codex exec",
  "ANTHROPIC_BASE_URL=$GW/anthropic",
  "claude -p",
];

// Variables that are a reader's business, never the test machine's: vendor keys and gw's own.
const DROPPED_ENV = /^(?:NODE_ENV|NODE_OPTIONS|DEBUG|GW|GW_[A-Z_]+|[A-Z0-9_]*_API_KEY|(?:OPENAI|ANTHROPIC|CODEX|CLAUDE)_[A-Z0-9_]+)$/;
// The keys the README tells the reader to export before `gw serve`; placeholders stand in.
const SERVER_KEYS = {
  OPENAI_API_KEY: "sk-readme-placeholder",
  ANTHROPIC_API_KEY: "sk-ant-readme-placeholder",
  OPENROUTER_API_KEY: "sk-or-readme-placeholder",
  GEMINI_API_KEY: "readme-placeholder",
};
// Set by bash itself; not something a block exported.
const SHELL_ENV = new Set(["_", "PWD", "OLDPWD", "SHLVL"]);

interface Walk {
  root: string;
  work: string;
  home: string;
  configFile: string;
  port: number;
  env: Record<string, string>;
  serve: ReturnType<typeof spawn>;
  serveExited: Promise<number | null>;
  serverLog: () => string;
  fakeUrls: Record<string, string>;
  chat: FakeOpenAI;
  images: FakeOpenAIImages;
  audio: FakeOpenAIAudio;
  searxng: FakeSearxng;
  anthropic: FakeAnthropic;
  gemini: FakeGemini;
  openaiFront: http.Server;
  /** When each block ran (wall clock, as the server's log stamps its lines). */
  windows: Array<{ line: number; exit: number; from: number; to: number }>;
  /** Set by the first block that does not end as the README says. */
  brokenAt?: number;
}

let walk: Walk | undefined;

/** A hang guard, not a speed check: on a loaded machine a block of a dozen gw commands takes minutes. */
const BLOCK_HANG_MS = 9 * 60_000;

function run(command: string, args: string[], env: Record<string, string>, cwd: string, timeoutMs = BLOCK_HANG_MS): Promise<RunResult> {
  return runCommand(command, args, { env, cwd, hangMs: timeoutMs });
}

/** The server's log lines that parse as JSON (it writes JSON lines when stderr is not a terminal). */
function logRecords(log: string): Array<Record<string, any>> {
  return log
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, any>;
      } catch {
        return {};
      }
    });
}

/**
 * Wait until the running server has (re)loaded config.json as it is now. The server reloads 30 ms
 * after the file's last change and logs it; a reload logged at least that long after the file's
 * mtime read this version.
 */
async function waitForReload(w: Walk, since: number): Promise<void> {
  const mtime = statSync(w.configFile).mtimeMs;
  if (mtime <= since) return;
  const reloaded = () =>
    logRecords(w.serverLog()).some(
      (record) => typeof record.msg === "string" && /^config (reloaded|change refused)/.test(record.msg) && Date.parse(record.time) >= Math.floor(mtime) + 25,
    );
  await eventually(reloaded, "the server to reload config.json after its change").catch((error: Error) => {
    throw new Error(`${error.message}; its log:\n${w.serverLog()}`);
  });
}

/** Point every provider the README configured at its vendor's fake (see the top of this file). */
async function pointProvidersAtFakes(w: Walk): Promise<void> {
  const config = JSON.parse(readFileSync(w.configFile, "utf8")) as { providers: Record<string, { type: string; baseUrl?: string }> };
  const before = statSync(w.configFile).mtimeMs;
  for (const [name, provider] of Object.entries(config.providers)) {
    if (provider.type === "local") continue;
    const fake = w.fakeUrls[provider.type];
    if (!fake)
      throw new Error(
        `the README configures provider "${name}" of type ${provider.type}, which this test has no fake for: add one, or it would call the real vendor`,
      );
    if (provider.baseUrl === fake) continue;
    const result = await run("gw", ["providers", "set", name, "--base-url", fake], w.env, w.work);
    if (result.code !== 0) throw new Error(`gw providers set ${name} --base-url ${fake} failed (${result.code}): ${result.stderr}`);
  }
  await waitForReload(w, before);
}

/** Exported variables after a block, as `env -0` wrote them. */
function readExports(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of readFileSync(file, "utf8").split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0 && !SHELL_ENV.has(entry.slice(0, eq))) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

test.before(async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), "gw-readme-"));
  const bin = path.join(root, "bin");
  const work = path.join(root, "work");
  const home = path.join(root, "home");
  const userHome = path.join(root, "user");
  for (const dir of [bin, work, userHome, path.join(work, "photos")]) mkdirSync(dir, { recursive: true });
  const commands = {
    gw: `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(repo, "bin/run.js"))} "$@"`,
    codex: `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(codexScript)} "$@"`,
    claude: `exec ${JSON.stringify(await claudeBinary())} "$@"`,
  };
  for (const [name, line] of Object.entries(commands)) {
    writeFileSync(path.join(bin, name), `#!/bin/sh\n${line}\n`);
    chmodSync(path.join(bin, name), 0o755);
  }
  // The packages the README's scripts import, as the reader's `npm install` would have them.
  symlinkSync(path.join(repo, "node_modules"), path.join(work, "node_modules"), "dir");

  // The reader's files.
  writeFileSync(path.join(work, "report.pdf"), `%PDF-1.4\n% a report\n${"lorem ipsum ".repeat(400)}\n%%EOF\n`);
  writeFileSync(path.join(work, "photos/beach.jpg"), jpegFile(64, 48, [30, 120, 200, 255]));
  writeFileSync(path.join(work, "photos/hills.jpg"), jpegFile(48, 64, [40, 160, 60, 255]));
  writeFileSync(path.join(work, "big.bin"), Buffer.alloc(256 * 1024, 7));
  writeFileSync(path.join(work, "a.png"), pngFile(32, 32));

  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !DROPPED_ENV.test(name)) env[name] = value;
  Object.assign(env, { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`, HOME: userHome, GW_HOME: home, ...claudeCodeOfflineEnv });

  const [chat, images, audio, anthropic, gemini, searxng] = await Promise.all([
    startFakeOpenAI(),
    startFakeOpenAIImages(),
    startFakeOpenAIAudio(),
    startFakeAnthropic(),
    startFakeGemini(),
    startFakeSearxng(),
  ]);
  // One address for an `openai` provider: chat to the chat fake, pictures and audio to theirs.
  const openaiFront = http.createServer((request, response) => {
    const requested = request.url ?? "";
    const target = new URL(requested.startsWith("/v1/images/") ? images.url : requested.startsWith("/v1/audio/") ? audio.url : chat.url);
    const forward = http.request(
      { host: target.hostname, port: target.port, method: request.method, path: request.url, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forward.on("error", () => response.destroy());
    request.pipe(forward);
  });
  await new Promise<void>((resolve) => openaiFront.listen(0, "127.0.0.1", resolve));
  const frontPort = (openaiFront.address() as net.AddressInfo).port;
  const fakeUrls = { openai: `http://127.0.0.1:${frontPort}/v1`, anthropic: anthropic.url, gemini: gemini.url, searxng: searxng.url };

  const tools = await run("bash", ["-c", "command -v curl jq base64"], env, work);
  if (tools.code !== 0) throw new Error("the README's blocks need curl, jq and base64 on PATH");

  const init = await run("gw", ["init"], env, work);
  if (init.code !== 0) throw new Error(`gw init failed: ${init.stderr}`);
  const configFile = path.join(home, "config.json");
  const port = await freePort();
  const config = JSON.parse(readFileSync(configFile, "utf8"));
  config.server.port = port;
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);

  const serve = spawn("gw", ["serve"], { env: { ...env, ...SERVER_KEYS }, cwd: work, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  serve.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")));
  const serveExited = new Promise<number | null>((resolve) => serve.on("exit", (code) => resolve(code)));
  const first = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gw serve printed nothing in 30 s: ${log}`)), 30_000);
    createInterface({ input: serve.stdout! }).once("line", (line) => {
      clearTimeout(timer);
      resolve(line);
    });
    serve.once("exit", (code) => reject(new Error(`gw serve exited ${code}: ${log}`)));
  });
  // The Quick start's promise, on this run's port.
  if (first !== `listening on http://127.0.0.1:${port}`) throw new Error(`gw serve's first line: ${JSON.stringify(first)}`);

  walk = {
    root,
    work,
    home,
    configFile,
    port,
    env,
    serve,
    serveExited,
    serverLog: () => log,
    fakeUrls,
    chat,
    images,
    audio,
    searxng,
    anthropic,
    gemini,
    openaiFront,
    windows: [],
  };
});

test.after.always(async () => {
  if (!walk) return;
  if (walk.serve.exitCode === null) {
    walk.serve.kill("SIGKILL");
    await walk.serveExited;
  }
  walk.openaiFront.close();
  await Promise.all([walk.chat.close(), walk.images.close(), walk.audio.close(), walk.searxng.close(), walk.anthropic.close(), walk.gemini.close()]);
  rmSync(walk.root, { recursive: true, force: true });
});

test.serial("the README's marked blocks cover the walk-through", (t) => {
  const code = blocks.map((block) => block.code).join("\n");
  for (const command of COVERED) t.true(code.includes(command), `no readme-test block runs ${command}`);
});

/** Where a `file=PATH` block goes, and what it holds (see the top of this file). */
function blockFile(w: Walk, block: ReadmeBlock & { file: string }): { target: string; text: string } {
  const target = block.file.startsWith("~/") ? path.join(w.env.HOME!, block.file.slice(2)) : path.join(w.work, block.file);
  const text = block.code.replaceAll("127.0.0.1:8787", `127.0.0.1:${w.port}`);
  if (block.file === "~/.codex/config.toml") return { target, text: [...codexOfflineConfig.head, text, ...codexOfflineConfig.tables, ""].join("\n") };
  return { target, text: `${text}\n` };
}

/** The prompt a block passes to `codex exec` or `claude -p`, when it does. */
const agentPrompt = (code: string) => /^(?:[A-Z_]+=\S+ )*(?:codex exec|claude -p)\b.*?"([^"]+)"/m.exec(code)?.[1];

for (const [index, block] of blocks.entries()) {
  if (block.file !== undefined) {
    const file = block.file;
    test.serial(`README line ${block.line}: writes ${file}`, (t) => {
      const w = walk!;
      if (w.brokenAt !== undefined) return t.fail(`not run: the README block at line ${w.brokenAt} did not end as the README says`);
      const { target, text } = blockFile(w, { ...block, file });
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, text);
      t.is(readFileSync(target, "utf8"), text);
    });
    continue;
  }
  const firstLine = (block.code.split("\n").find((line) => line.trim() && !line.startsWith("#")) ?? "").replace(/\s+#\s.*$/, "");
  test.serial(`README line ${block.line}: ${firstLine.slice(0, 80)}${block.exit ? ` (exits ${block.exit})` : ""}`, async (t) => {
    t.timeout(BLOCK_HANG_MS + 60_000);
    const w = walk!;
    if (w.brokenAt !== undefined) return t.fail(`not run: the README block at line ${w.brokenAt} did not end as the README says`);
    w.brokenAt = block.line; // cleared below when the block ends as it should

    await pointProvidersAtFakes(w);
    const envFile = path.join(w.root, `env-${index}`);
    const script = `${block.code.replaceAll("127.0.0.1:8787", `127.0.0.1:${w.port}`)}\nenv -0 > ${JSON.stringify(envFile)}\n`;
    const configBefore = statSync(w.configFile).mtimeMs;
    const started = Date.now();
    const result = await run("bash", ["-euo", "pipefail", "-c", script], w.env, w.work);
    w.windows.push({ line: block.line, exit: block.exit, from: started, to: Date.now() });
    const report = `README line ${block.line}, exit ${result.code}:\n${block.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
    t.is(result.code, block.exit, report);
    if (block.exit === 0 && result.code === 0) w.env = readExports(envFile);
    await waitForReload(w, configBefore);

    // What the README's comments promise, where a zero exit would not show it.
    if (block.code.includes("$GW/health")) t.true(result.stdout.includes('{"status":"ok"}'), report);
    if (/^gw models/m.test(block.code)) t.regex(result.stdout, /^ID +NAME +CONTEXT +MODALITIES +PRICE$/m, report);
    if (block.exit === 1 && /^gw doctor/m.test(block.code)) t.regex(result.stdout, /^FAIL +env OPENAI_API_KEY/m, report);
    if (block.exit === 127) t.regex(result.stderr, /Did you mean/, report);
    if (block.code.includes("> fox.webp")) t.is(readFileSync(path.join(w.work, "fox.webp")).subarray(8, 12).toString("latin1"), "WEBP", report);
    // The upstream fakes answer `echo: <the last user turn>`: the answer printed is the model's.
    const scripts = block.code.match(/\bnode \S+\.mjs\b/g) ?? [];
    if (scripts.length > 0) {
      const printed = result.stdout.trimEnd().split("\n");
      t.is(printed.length, scripts.length, report);
      for (const line of printed) t.regex(line, /^echo: \S/, report);
    }
    const prompt = agentPrompt(block.code);
    if (prompt !== undefined) {
      t.regex(result.stdout.trim(), /^echo: /, report);
      t.true(result.stdout.includes(prompt), report);
    }
    if (result.code === block.exit) w.brokenAt = undefined;
  });
}

test.serial("every request the blocks made succeeded, vendor calls reached the fakes, and SIGTERM ends gw serve with 0", async (t) => {
  const w = walk!;
  if (w.brokenAt !== undefined) return t.fail(`not run: the README block at line ${w.brokenAt} did not end as the README says`);
  w.serve.kill("SIGTERM");
  t.is(await w.serveExited, 0);
  const records = logRecords(w.serverLog());
  const access = records.filter((record) => typeof record.status === "number" && typeof record.path === "string");
  t.true(access.length > 0, "no access lines on gw serve's stderr");
  const blockOf = (record: Record<string, any>) => w.windows.find(({ from, to }) => Date.parse(record.time) >= from && Date.parse(record.time) <= to);
  const failed = access
    .filter((record) => record.status >= 400 && (blockOf(record)?.exit ?? 0) === 0)
    .map((record) => `README line ${blockOf(record)?.line ?? "?"}: ${record.msg}`);
  t.deepEqual(failed, [], "a README request failed (curl -s still exits 0)");
  t.deepEqual(
    records.filter((record) => /upstream attempt failed/.test(String(record.msg))),
    [],
  );
  t.true(
    w.chat.requests.some((request) => request.path === "/v1/chat/completions"),
    "no chat call reached the fake",
  );
  // The clients reached gw's endpoints, not something else: each block's calls are in its window.
  const answeredIn = (marker: RegExp, method: string, endpoint: string) => {
    const block = blocks.find((candidate) => candidate.file === undefined && marker.test(candidate.code));
    const window = block && w.windows.find(({ line }) => line === block.line);
    return window
      ? access.filter((record) => record.method === method && record.path === endpoint && blockOf(record) === window && record.status === 200).length
      : -1;
  };
  t.true(answeredIn(/^node /m, "POST", "/v1/responses") >= 4, "the README's scripts did not each call POST /v1/responses");
  t.true(answeredIn(/^codex exec/m, "POST", "/v1/responses") >= 1, "codex exec did not call POST /v1/responses");
  t.true(answeredIn(/claude -p/, "POST", "/anthropic/v1/messages") >= 1, "claude -p did not call POST /anthropic/v1/messages");
  // responses.mjs continues with previous_response_id on another upstream: the first exchange reaches it.
  if (blocks.some((block) => block.code.includes("previous_response_id"))) {
    const continued = w.anthropic.requests.find((request) => JSON.stringify(request.body.messages ?? "").includes("And another"));
    t.truthy(continued, "the continued response did not reach the Anthropic fake");
    t.true(JSON.stringify(continued?.body.messages).includes("echo: Name a colour"), "the first answer did not reach the second model");
  }
  if (blocks.some((block) => block.code.includes("/v1/image/generations"))) t.true(w.images.requests.length > 0, "no picture was drawn by the fake");
  if (blocks.some((block) => block.code.includes("/v1/search"))) t.true(w.searxng.requests.length > 0, "no search reached the fake");
  if (blocks.some((block) => block.code.includes("/v1/audio/transcriptions"))) {
    t.true(
      w.audio.requests.some((request) => request.path === "/v1/audio/transcriptions"),
      "no transcription reached the fake",
    );
  }
});
