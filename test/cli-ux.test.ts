// What a new user ran into in the CLI (issue 20), each as the user meets it: `gw` commands run as
// a user runs them, against a real gw (in-process, or `gw serve` as a process), its upstreams the
// fakes of test/fakes.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import test from "ava";
import { systemdUnit } from "../src/cli/systemd-unit.js";
import { homePaths } from "../src/config/paths.js";
import { fakeAudio } from "./fakes/audio-files.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { addKey, gw, gwBin, json, makeHome, spawnServe, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let images: FakeOpenAIImages;
let gateway: TestGateway;
let home: string;
let key: string;
const folders: string[] = [];

test.before(async () => {
  images = await startFakeOpenAIImages();
  home = await makeHome((config) => {
    config.upstream = { retries: 0 };
    // Transcriptions are refused before any upstream call in these tests: the images fake stands in.
    config.providers = { openai: { type: "openai", baseUrl: images.url, apiKey: "test-key" }, local: { type: "local" } };
    config.tools.image = { default: "openai/gpt-image-1", allow: ["openai/gpt-image-1", "openai/dall-e-2"] };
    config.tools.transcription = { default: "openai/whisper-1", allow: ["openai/whisper-1"] };
  });
  key = await addKey(home, "uma", "pro");
  gateway = await startTestGateway(home);
});

test.after.always(async () => {
  await gateway?.shutdown();
  await images?.close();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const env = () => ({ GW_BASE_URL: gateway.url, GW_API_KEY: key, GW_HOME: home });

function tempFolder(): string {
  const folder = mkdtempSync(path.join(os.tmpdir(), "gw-cli-ux-"));
  folders.push(folder);
  return folder;
}

// 1. gw mcp

test("gw mcp lists every tool the running server offers, as its MCP tools/list names them", async (t) => {
  const client = new Client({ name: "gw-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  const offered = (await client.listTools()).tools;
  await client.close();
  t.true(offered.length >= 10, `${offered.length} tools`);

  const text = await gw(["mcp"], { env: env() });
  t.is(text.code, 0, text.stderr);
  for (const tool of offered) t.regex(text.stdout, new RegExp(`^\\s*${tool.name}\\b`, "m"), tool.name);
  const body = json<{ tools: Array<{ name: string; description?: string }> }>(await gw(["mcp", "--json"], { env: env() }));
  t.deepEqual(
    body.tools.map((tool) => tool.name),
    offered.map((tool) => tool.name),
  );
  t.is(body.tools[0]?.description, offered[0]?.description);

  // No server to ask: the snippet still prints, and stderr says why the tools are missing.
  const down = await gw(["mcp"], { env: { GW_BASE_URL: "http://127.0.0.1:9", GW_API_KEY: key } });
  t.is(down.code, 0, down.stderr);
  t.regex(down.stdout, /MCP endpoint: http:\/\/127\.0\.0\.1:9\/mcp/);
  t.regex(down.stderr, /cannot list the tools/);
});

// 4. Usage errors: suggestions, and one exit code

test("a mistyped flag is answered with the flag it most likely meant, exit 2", async (t) => {
  const image = await gw(["image", "generate", "--modle", "x", "a fox"], { env: env() });
  t.is(image.code, 2, image.stderr);
  t.regex(image.stderr, /--modle/);
  t.regex(image.stderr, /Did you mean --model\?/);
  const keys = await gw(["keys", "create", "--agnet", "bob"], { home });
  t.is(keys.code, 2, keys.stderr);
  t.regex(keys.stderr, /Did you mean --agent\?/);
  const far = await gw(["keys", "list", "--zzzzzz"], { home });
  t.is(far.code, 2);
  t.notRegex(far.stderr, /Did you mean/);
});

test("a mistyped provider type is answered with the type it most likely meant, exit 2", async (t) => {
  const typo = await gw(["providers", "add", "foo", "--type", "opnai"], { home: await makeHome() });
  t.is(typo.code, 2, typo.stderr);
  t.regex(typo.stderr, /unknown provider type "opnai"/);
  t.regex(typo.stderr, /Did you mean "openai"\?/);
});

test("usage errors (unknown flag, bad flag value, missing argument) exit 2; failures at run time exit 1", async (t) => {
  const usage: string[][] = [
    ["keys", "create", "--agent", "a", "--rpm", "abc"],
    ["keys", "create", "--agent", "a", "--expires", "yesterday"],
    ["keys", "create", "--agent", "a", "--budget", "lots"],
    ["routes", "add", "x/", "--upstream", "nocolon"],
    ["routes", "add"],
    ["usage", "--by", "colour"],
    ["image", "generate", "--n", "x", "a fox"],
    ["chat", "--temperature", "warm", "hi"],
    ["models", "add", "x/y", "--name", "Y", "--context-length", "100", "--input-price", "1"],
    ["image", "generate"],
    ["storage", "get"],
    ["providers", "set", "openai"],
  ];
  for (const args of usage) {
    const result = await gw(args, { env: env() });
    t.is(result.code, 2, `gw ${args.join(" ")}: ${result.stderr}`);
    t.not(result.stderr.trim(), "", args.join(" "));
  }
  const runtime: string[][] = [
    ["keys", "revoke", "gw_nosuchkey"],
    ["providers", "remove", "nobody"],
    ["models", "--base-url", "http://127.0.0.1:9"],
  ];
  for (const args of runtime) {
    const result = await gw(args, { env: env() });
    t.is(result.code, 1, `gw ${args.join(" ")}: ${result.stderr}`);
  }
});

// 5. gw serve --home: a new home is announced; a typo'd path is refused

/** `gw serve` as a process: its stdout's first line, stderr as it comes, and its exit. */
function startServe(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; firstLine: Promise<string>; stderr: () => string; exited: Promise<number | null> } {
  const childEnv = { ...process.env, ...env };
  delete childEnv.NODE_ENV;
  const child = spawn(process.execPath, [gwBin, "serve", ...args], { stdio: ["ignore", "pipe", "pipe"], env: childEnv });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const firstLine = new Promise<string>((resolve) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("close", () => resolve(""));
  });
  return { child, firstLine, stderr: () => stderr, exited };
}

test("gw serve --home into a missing folder refuses (exit 2) unless --init; a new home is announced on stderr's first line", async (t) => {
  const root = tempFolder();
  const typo = path.join(root, "no-such-parent", "home");
  const refused = await gw(["serve", "--home", typo, "--port", "0"]);
  t.is(refused.code, 2, refused.stderr);
  t.regex(refused.stderr, new RegExp(`${path.join(root, "no-such-parent").replace(/[/.]/g, "\\$&")}.*does not exist`));
  t.regex(refused.stderr, /--init/);
  t.false(existsSync(path.join(root, "no-such-parent")), "nothing was created");

  for (const [home, extra] of [
    [typo, ["--init"]],
    [path.join(root, "fresh"), []],
  ] as const) {
    const serve = startServe(["--home", home, "--port", "0", ...extra]);
    t.regex(await serve.firstLine, /^listening on http:\/\/127\.0\.0\.1:\d+$/, serve.stderr());
    t.is(serve.stderr().split("\n")[0], `creating a new home at ${home}`);
    t.true(existsSync(homePaths(home).config));
    serve.child.kill("SIGTERM");
    t.is(await serve.exited, 0);
  }

  // An existing home starts without the note.
  const again = await spawnServe(path.join(root, "fresh"));
  t.notRegex(again.stderr(), /creating a new home/);
  again.child.kill("SIGTERM");
  t.is(await again.exited, 0);
});

// 6. EADDRINUSE

test("a port in use names the address and how to pick another", async (t) => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
  const { port } = blocker.address() as net.AddressInfo;
  try {
    const result = await gw(["serve", "--home", await makeHome(), "--host", "127.0.0.1", "--port", String(port)]);
    t.is(result.code, 1, result.stderr);
    t.regex(result.stderr, new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
    t.regex(result.stderr, /--port/);
    t.regex(result.stderr, /server\.port/);
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
});

// 7. Keys and their plan

test("gw keys create says when the plan caps --rpm below what was asked, and when it put a new agent on the free plan", async (t) => {
  const keysHome = await makeHome();
  const created = await gw(["keys", "create", "--agent", "newbie", "--rpm", "60"], { home: keysHome });
  t.is(created.code, 0, created.stderr);
  t.regex(created.stdout, /^gw_\w+\n$/);
  t.regex(created.stderr, /agent "newbie" is new: it is on the free plan/);
  t.regex(created.stderr, /--rpm 60 is above the free plan's 20 requests a minute: the key gets 20/);

  const within = await gw(["keys", "create", "--agent", "newbie", "--rpm", "10", "--json"], { home: keysHome });
  t.is(within.code, 0, within.stderr);
  t.is(within.stderr, "", "an existing agent, a limit under the plan's: nothing to say");
  const onPro = await gw(["keys", "create", "--agent", "paid", "--plan", "pro", "--rpm", "60"], { home: keysHome });
  t.notRegex(onPro.stderr, /free plan|above/);
});

test("gw keys list shows each key's own limits: rpm, tpm, models, budget, expiry", async (t) => {
  const keysHome = await makeHome();
  const made = await gw(
    [
      "keys",
      "create",
      "--agent",
      "lim",
      "--plan",
      "pro",
      "--rpm",
      "12",
      "--tpm",
      "3400",
      "--models",
      "fake/*,auto",
      "--budget",
      "5000",
      "--expires",
      "2099-01-31",
    ],
    {
      home: keysHome,
    },
  );
  t.is(made.code, 0, made.stderr);
  await gw(["keys", "create", "--agent", "plain", "--plan", "pro"], { home: keysHome });
  const listed = await gw(["keys", "list"], { home: keysHome });
  t.is(listed.code, 0, listed.stderr);
  t.regex(listed.stdout, /^NAME\s+PREFIX\s+AGENT\s+PLAN\s+RPM\s+TPM\s+MODELS\s+BUDGET\s+SPENT\s+EXPIRES\s+LAST USED$/m);
  t.regex(listed.stdout, /\slim\s+pro\s+12\s+3,400\s+fake\/\*,auto\s+5000\/month\s+0\s+2099-02-01T00:00:00\.000Z\s+never$/m);
  t.regex(listed.stdout, /\splain\s+pro\s+-\s+-\s+-\s+-\s+0\s+never\s+never$/m);
});

// 8. Smaller things

/** What a terminal shows after `raw` (carriage returns, erase-line, newlines). */
function screen(raw: string): string[] {
  const lines: string[] = [];
  let line = "";
  let column = 0;
  for (let index = 0; index < raw.length; index += 1) {
    if (raw.startsWith("\x1b[2K", index)) {
      line = "";
      index += 3;
      continue;
    }
    const char = raw[index]!;
    if (char === "\r") column = 0;
    else if (char === "\n") {
      lines.push(line);
      line = "";
      column = 0;
    } else {
      line = line.slice(0, column).padEnd(column) + char + line.slice(column + 1);
      column += 1;
    }
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** Run `gw ARGS` on a pseudo-terminal (util-linux script): stdout and stderr both a terminal, interleaved as a user sees them. */
function onTerminal(args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, gwBin, ...args].map((word) => `'${word}'`).join(" ");
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env() };
  delete childEnv.NODE_ENV;
  const child = spawn("script", ["-qec", command, "/dev/null"], { cwd, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, output })));
}

test("a batch's progress bar is cleared before each result line, and gone at the end", async (t) => {
  const cwd = tempFolder();
  writeFileSync(path.join(cwd, "lines.jsonl"), [JSON.stringify({ prompt: "a fox" }), "not json", JSON.stringify({ prompt: "an owl" }), "{"].join("\n"));
  const run = await onTerminal(["image", "generate", "--batch", "lines.jsonl", "--concurrency", "1", "-o", "out"], cwd);
  t.is(run.code, 1, run.output);
  const shown = screen(run.output);
  const results = shown.filter((line) => line.includes('"line":'));
  t.is(results.length, 4, shown.join("\n"));
  for (const line of results) t.regex(line, /^\{"line":\d+,"status":"(ok|error)"/, shown.join("\n"));
  t.false(
    shown.some((line) => /\[[#-]+\] \d+\/\d+/.test(line)),
    `no bar is left on the screen:\n${shown.join("\n")}`,
  );
});

test("an upload's progress line is erased when the transfer is done", async (t) => {
  const cwd = tempFolder();
  writeFileSync(path.join(cwd, "big.bin"), Buffer.alloc(5 * 1024 * 1024, 7));
  const run = await onTerminal(["storage", "upload", "big.bin"], cwd);
  t.is(run.code, 0, run.output);
  t.regex(run.output, /uploading/, "the progress was shown on the terminal");
  const shown = screen(run.output);
  t.false(
    shown.some((line) => /\(\d+%\)/.test(line)),
    `no progress line is left on the screen:\n${shown.join("\n")}`,
  );
  t.true(
    shown.some((line) => line.includes("big.bin")),
    shown.join("\n"),
  );
});

test("gw catalog image has a price column", async (t) => {
  const result = await gw(["catalog", "image"], { env: env() });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /^ID\s+OPERATIONS\s+FORMATS\s+ASPECT RATIOS\s+PRICE$/m);
  t.regex(result.stdout, /^openai\/dall-e-2\s.*\s\$0\.02 a picture$/m);
  t.regex(result.stdout, /^openai\/gpt-image-1\s.*\$0\.1593 a megapixel \(low \$0\.0105, medium \$0\.0401, high \$0\.1593\)$/m);
});

test("gw storage quota shows the operations used and allowed this period", async (t) => {
  const quotaKey = await addKey(home, "quota-user", "pro");
  const folder = tempFolder();
  writeFileSync(path.join(folder, "note.txt"), "hello");
  const quotaEnv = { ...env(), GW_API_KEY: quotaKey };
  t.is((await gw(["storage", "upload", path.join(folder, "note.txt")], { env: quotaEnv })).code, 0);
  const result = await gw(["storage", "quota"], { env: quotaEnv });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /^5 B of 5 GB used \(5 of 5368709120 bytes\)$/m);
  t.regex(result.stdout, /^1 of 500 storage operations used this month \(\d{4}-\d{2}, UTC; uploads, presigned uploads and deletes count\)$/m);
  // --json stays exactly the API body.
  const body = json<Record<string, unknown>>(await gw(["storage", "quota", "--json"], { env: quotaEnv }));
  t.deepEqual(Object.keys(body), ["data"]);
});

test("the HTTPS hint names the home's real certificate file", async (t) => {
  const httpsHome = await makeHome();
  const httpsKey = await addKey(httpsHome, "tls", "pro");
  const serve = await spawnServe(httpsHome, ["--https"]);
  try {
    const untrusted = await gw(["models"], { home: httpsHome, env: { GW_BASE_URL: serve.url, GW_API_KEY: httpsKey } });
    t.is(untrusted.code, 1);
    t.true(untrusted.stderr.includes(`NODE_EXTRA_CA_CERTS=${homePaths(httpsHome).tlsCert}`), untrusted.stderr);
    t.notRegex(untrusted.stderr, /HOME\/tls/);
  } finally {
    serve.child.kill("SIGTERM");
    await serve.exited;
  }
});

test("audio refusals end in one full stop, not two", async (t) => {
  const send = (url: string, bytes: Uint8Array<ArrayBuffer>) => {
    const body = new FormData();
    body.set("file", new Blob([bytes], { type: "audio/mpeg" }), "talk.mp3");
    return fetch(`${url}/v1/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body });
  };
  const text = new TextEncoder().encode("this is plain text, not audio");
  const refused = (await (await send(gateway.url, text)).json()) as { error: { code: string; message: string } };
  t.is(refused.error.code, "invalid_audio");
  t.regex(refused.error.message, /[^.]\.$/);
  t.notRegex(refused.error.message, /\.\./);

  // A gateway whose ffprobe is missing says so, in one sentence's worth of full stops.
  const mp3 = await fakeAudio({ codec: "mp3", durationSeconds: 1 });
  // ffprobe is looked for at GW_FFPROBE_PATH, beside ffmpeg, then on PATH: an empty PATH leaves none.
  const serve = startServe(["--home", home, "--port", "0"], { PATH: tempFolder() });
  try {
    const url = /^listening on (\S+)$/.exec(await serve.firstLine)?.[1];
    if (!url) throw new Error(`gw serve did not start: ${serve.stderr()}`);
    const response = await send(url, new Uint8Array(mp3));
    const missing = (await response.json()) as { error: { code: string; message: string } };
    t.is(response.status, 503, JSON.stringify(missing));
    t.regex(missing.error.message, /ffprobe/);
    t.notRegex(missing.error.message, /\.\./);
  } finally {
    serve.child.kill("SIGTERM");
    await serve.exited;
  }
});

test("gw service unit leaves PrivateTmp off (and says why) for a home under /tmp or /var/tmp", async (t) => {
  const base = { node: "/usr/bin/node", script: "/opt/gw/bin/run.js" };
  for (const tmpHome of ["/tmp/gw-home", "/var/tmp/gw"]) {
    const unit = systemdUnit({ ...base, home: tmpHome });
    t.false(unit.includes("PrivateTmp=yes"), tmpHome);
    t.regex(unit, /^PrivateTmp=no$/m);
    t.regex(unit, new RegExp(`^# .*${tmpHome.replace(/\//g, "\\/")}.*private /tmp`, "m"));
  }
  t.regex(systemdUnit({ ...base, home: "/var/lib/gw" }), /^PrivateTmp=yes$/m);
  t.regex(systemdUnit({ ...base, home: "/tmpfiles/gw" }), /^PrivateTmp=yes$/m);

  // The command says so too (a home under the real /tmp, whatever TMPDIR says).
  const folder = mkdtempSync("/tmp/gw-cli-ux-unit-");
  folders.push(folder);
  const printed = await gw(["service", "unit", "--home", folder]);
  t.is(printed.code, 0, printed.stderr);
  t.regex(printed.stdout, /^PrivateTmp=no$/m);
  t.regex(printed.stderr, /under \/tmp/);
});
