// docs/deploy.md, walked end to end as an operator would: every block marked
// `<!-- walkthrough: NAME -->` is taken from the document and used, in the document's order,
// against a real redis-server, an S3 server (s3rver), nginx and two `gw serve` instances. A wrong
// command, flag, setting or nginx directive in a marked block fails this test.
//
// What the operator already has: an embedded home ($GW_HOME) with a provider, a key, a billed
// call and a stored file, made here with `gw` commands and one embedded `gw serve`, then stopped.
//
// What differs from an operator's machines, and why:
// - Shell blocks run with `bash -euo pipefail`, `gw` on PATH, in one working directory, and share
//   what they `export` (one terminal session). The variables the document names come from here:
//   REDIS_URL (the test Redis on a free loopback port), S3_ENDPOINT (s3rver, with the bucket
//   `gw-files` already made: the `aws s3api` blocks, a cloud's CLI, are not run),
//   AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (s3rver's), GW_SIGNING_SECRET, GW_PUBLIC_URL
//   (nginx's address), GW_HOME (the instance the block runs for), and placeholder vendor keys.
//   The `gw.env` block holds placeholders and is not run.
// - `redis-conf` is applied to the running test Redis with CONFIG SET, directive by directive.
// - `instance-home` runs once for each instance: the migrated home, then a new one. The instances
//   are then started by this test (no systemd) as `gw serve --home H --host 127.0.0.1 --port 0`:
//   the flags override the file's `server.host` and `server.port` (0.0.0.0:8787), so traffic
//   stays on loopback and parallel runs never collide.
// - `nginx` is written as the conf.d file it is, included by a minimal nginx.conf of the test's
//   (events, temp paths in the test's folder), with the two upstream servers (10.0.0.11:8787 and
//   10.0.0.12:8787) read as the two instances' addresses, `listen 80;` as a free loopback port,
//   and /var/log/nginx/ as the test's folder. nginx runs in the foreground as the test's user.
// - The upstream vendor is the fake OpenAI (test/fakes/openai.ts): it answers `echo: <prompt>`.
// - Not run, as they need a cloud account, systemd, root or a certificate: the `aws s3api`, the
//   `gw service unit`/`systemctl` and `nginx -t`/reload lines, and the TLS lines (the nginx config
//   is checked with `nginx -t` here, then served).
//
// GW_DEPLOY_DOC=path walks another copy of the document (to see a broken block fail here).
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import test from "ava";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { freePort } from "./helpers/free-port.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { type RunResult, runCommand } from "./helpers/run-command.js";
import { startS3, type TestS3 } from "./helpers/s3-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

const repo = path.resolve(import.meta.dirname, "..");
const docPath = process.env.GW_DEPLOY_DOC ? path.resolve(process.env.GW_DEPLOY_DOC) : path.join(repo, "docs/deploy.md");

/** The document's runnable steps, in the order an operator meets them. */
const STEPS = ["redis-conf", "redis-check", "migrate", "instance-home", "nginx", "check", "backup"] as const;
type StepName = (typeof STEPS)[number];

interface DocBlock {
  name: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  code: string;
}

/** The marked blocks, in order; a marker not followed by a fenced block is an error. */
function walkthroughBlocks(markdown: string): DocBlock[] {
  const lines = markdown.split("\n");
  const blocks: DocBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    if (!lines[index]!.includes("walkthrough:")) continue;
    const mark = /^<!-- walkthrough: ([a-z0-9-]+) -->$/.exec(lines[index]!.trim());
    if (!mark) throw new Error(`${docPath} line ${index + 1}: malformed marker ${JSON.stringify(lines[index])} (<!-- walkthrough: NAME -->)`);
    const fence = /^```([a-z]+)$/.exec(lines[index + 1] ?? "");
    if (!fence) throw new Error(`${docPath} line ${index + 1}: a walkthrough marker must be followed by a fenced block`);
    const end = lines.indexOf("```", index + 2);
    if (end < 0) throw new Error(`${docPath} line ${index + 2}: unclosed fence`);
    blocks.push({ name: mark[1]!, line: index + 2, language: fence[1]!, code: lines.slice(index + 2, end).join("\n") });
    index = end;
  }
  return blocks;
}

const blocks = walkthroughBlocks(readFileSync(docPath, "utf8"));
function block(name: StepName): DocBlock {
  const found = blocks.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`${docPath} has no block marked walkthrough: ${name}`);
  return found;
}

const BUCKET = "gw-files";
const SIGNING_SECRET = "deploy-walkthrough-signing-secret-0123456789abcdef";
/** A hang guard for one block, not a speed check: the machine may be loaded. */
const BLOCK_HANG_MS = 5 * 60_000;

interface Instance {
  home: string;
  url: string;
  child: ChildProcess;
  log: () => string;
  exited: Promise<number | null>;
}

interface Walk {
  root: string;
  work: string;
  env: Record<string, string>;
  homes: { migrated: string; added: string };
  redis: TestRedis;
  bucket: TestS3;
  openai: FakeOpenAI;
  nginxPort: number;
  publicUrl: string;
  /** What the embedded home held before the migration, and a download link it handed out. */
  before: { key: string; spent: number; fileId: string; fileBytes: Buffer; link: string };
  instances: Instance[];
  nginx?: { child: ChildProcess; log: () => string; exited: Promise<number | null> };
  /** Set by the first step that did not end as the document says. */
  brokenAt?: string;
}

let walk: Walk | undefined;

function run(command: string, args: string[], env: Record<string, string>, cwd: string): Promise<RunResult> {
  return runCommand(command, args, { env, cwd, hangMs: BLOCK_HANG_MS });
}

async function runShellBlock(w: Walk, step: DocBlock, env: Record<string, string> = w.env): Promise<RunResult> {
  const envFile = path.join(w.root, `env-${step.name}-${Date.now()}`);
  const result = await run("bash", ["-euo", "pipefail", "-c", `${step.code}\nenv -0 > ${JSON.stringify(envFile)}\n`], env, w.work);
  if (result.code === 0) {
    for (const entry of readFileSync(envFile, "utf8").split("\0")) {
      const eq = entry.indexOf("=");
      if (eq > 0 && !["_", "PWD", "OLDPWD", "SHLVL"].includes(entry.slice(0, eq))) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
  }
  return result;
}

function report(step: DocBlock, result: RunResult): string {
  return `${docPath} line ${step.line} (${step.name}), exit ${result.code}:\n${step.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/** `gw` as the operator runs it, outside the document's blocks (setting up what they already have). */
async function gwCommand(w: Walk, args: string[]): Promise<string> {
  const result = await run("gw", args, w.env, w.work);
  if (result.code !== 0) throw new Error(`gw ${args.join(" ")} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** `gw serve` for one home, on loopback and a free port; resolves once it listens. */
async function startInstance(home: string, env: Record<string, string>, cwd: string): Promise<Instance> {
  const child = spawn("gw", ["serve", "--home", home, "--host", "127.0.0.1", "--port", "0"], { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("close", (code) => reject(new Error(`gw serve --home ${home} exited ${code}: ${log}`)));
  });
  const match = /^listening on (http:\/\/\S+)$/.exec(first);
  if (!match) throw new Error(`gw serve's first line: ${JSON.stringify(first)}`);
  return { home, url: match[1]!, child, log: () => log, exited };
}

async function stopProcess(child: ChildProcess, exited: Promise<number | null>, signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  child.kill(signal);
  return exited;
}

function nginxBinary(): string {
  for (const directory of [...(process.env.PATH ?? "").split(path.delimiter), "/usr/sbin", "/usr/local/sbin"]) {
    const candidate = path.join(directory, "nginx");
    if (directory && existsSync(candidate)) return candidate;
  }
  throw new Error("nginx is not installed: docs/deploy.md's load balancer is walked with a real nginx (install.sh installs it: apt-get install nginx)");
}

const chatBody = (prompt: string, stream: boolean) => JSON.stringify({ model: "auto", stream, messages: [{ role: "user", content: prompt }] });
const authorized = (key: string) => ({ authorization: `Bearer ${key}` });

async function keyInfo(base: string, key: string): Promise<{ status: number; body: { data?: { agent: string; plan_credits: { spent: number } } } }> {
  const response = await fetch(`${base}/v1/key`, { headers: authorized(key) });
  return { status: response.status, body: (await response.json()) as { data?: { agent: string; plan_credits: { spent: number } } } };
}

/** A billed call and a stored file on the embedded home: what the move must carry over. */
async function servedAWhile(base: string, key: string): Promise<Walk["before"]> {
  const answer = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { ...authorized(key), "content-type": "application/json" },
    body: chatBody("before the move", false),
  });
  if (answer.status !== 200) throw new Error(`the embedded home's chat call: ${answer.status} ${await answer.text()}`);
  await answer.arrayBuffer();
  const fileBytes = randomBytes(300 * 1024);
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(fileBytes)], { type: "application/octet-stream" }), "before.bin");
  const stored = await fetch(`${base}/v1/storage/upload`, { method: "POST", headers: authorized(key), body: form });
  if (stored.status !== 201) throw new Error(`the embedded home's upload: ${stored.status} ${await stored.text()}`);
  const fileId = ((await stored.json()) as { data: { id: string } }).data.id;
  const signed = await fetch(`${base}/v1/storage/files/${fileId}/url`, { headers: authorized(key) });
  if (signed.status !== 200) throw new Error(`the embedded home's link: ${signed.status} ${await signed.text()}`);
  const link = ((await signed.json()) as { data: { url: string } }).data.url;
  const info = await keyInfo(base, key);
  const spent = info.body.data?.plan_credits.spent ?? 0;
  if (spent <= 0) throw new Error(`the embedded home billed nothing: ${JSON.stringify(info.body)}`);
  return { key, spent, fileId, fileBytes, link };
}

test.before(async () => {
  const root = tempDir("gw-deploy-");
  const bin = path.join(root, "bin");
  const work = path.join(root, "work");
  const userHome = path.join(root, "user");
  const homes = { migrated: path.join(root, "instances/a"), added: path.join(root, "instances/b") };
  for (const directory of [bin, work, userHome, path.dirname(homes.migrated)]) mkdirSync(directory, { recursive: true });
  writeFileSync(path.join(bin, "gw"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(repo, "bin/run.js"))} "$@"\n`);
  chmodSync(path.join(bin, "gw"), 0o755);

  const redis = await startRedis();
  // The helper's Redis listens on a socket only; the document's blocks reach Redis by a URL, as an
  // operator's machines do (Redis 7 takes a new port at runtime).
  const redisPort = await freePort();
  const admin = redis.client();
  await admin.config("SET", "bind", "127.0.0.1");
  await admin.config("SET", "port", String(redisPort));
  const bucket = await startS3([BUCKET], tempDir("gw-deploy-s3-"));
  const s3Port = bucket.port;
  const openai = await startFakeOpenAI();
  const nginxPort = await freePort();
  const publicUrl = `http://127.0.0.1:${nginxPort}`;

  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(?:NODE_ENV|NODE_OPTIONS|DEBUG|GW_[A-Z_]+|AWS_[A-Z_]+|REDIS_URL|[A-Z0-9_]*_API_KEY)$/.test(name)) env[name] = value;
  }
  Object.assign(env, {
    PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`,
    HOME: userHome,
    GW_HOME: homes.migrated,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
    GW_SIGNING_SECRET: SIGNING_SECRET,
    GW_PUBLIC_URL: publicUrl,
    // The vendor keys gw.env would hold for the config `gw init` wrote (`gw doctor` fails on an unset one).
    OPENAI_API_KEY: "sk-deploy-placeholder",
    ANTHROPIC_API_KEY: "sk-ant-deploy-placeholder",
  });
  const tools = await run("bash", ["-c", "command -v curl jq redis-cli"], env, work);
  if (tools.code !== 0) throw new Error("docs/deploy.md's blocks need curl, jq and redis-cli on PATH");

  const w: Walk = {
    root,
    work,
    env,
    homes,
    redis,
    bucket,
    openai,
    nginxPort,
    publicUrl,
    before: { key: "", spent: 0, fileId: "", fileBytes: Buffer.alloc(0), link: "" },
    instances: [],
  };
  walk = w;

  // What the operator has before reading the page: one embedded home that has served a while.
  await gwCommand(w, ["init"]);
  // The home's `openai` provider (which `auto` routes to) leads to the fake vendor.
  await gwCommand(w, ["providers", "set", "openai", "--base-url", openai.url, "--api-key", "sk-vendor"]);
  const created = JSON.parse(await gwCommand(w, ["keys", "create", "--agent", "early-bird", "--plan", "pro", "--json"])) as { key: string };
  const embedded = await startInstance(homes.migrated, env, work);
  w.before = await servedAWhile(embedded.url, created.key).catch(async (error: unknown) => {
    await stopProcess(embedded.child, embedded.exited);
    throw error;
  });
  const code = await stopProcess(embedded.child, embedded.exited);
  if (code !== 0) throw new Error(`the embedded gw serve exited ${code}: ${embedded.log()}`);
});

test.after.always(async () => {
  const w = walk;
  if (!w) return;
  if (w.nginx) await stopProcess(w.nginx.child, w.nginx.exited, "SIGQUIT");
  await Promise.all(w.instances.map((instance) => stopProcess(instance.child, instance.exited)));
  await w.openai.close();
  await w.bucket.close();
  await w.redis.stop();
});

test.serial("the document marks its steps, in order", (t) => {
  t.deepEqual(
    blocks.map((candidate) => candidate.name),
    [...STEPS],
  );
});

/** One step of the document: skipped with a failure when an earlier one broke. */
function step(name: StepName, title: string, body: (t: import("ava").ExecutionContext, w: Walk, doc: DocBlock) => Promise<void>): void {
  test.serial(`${name}: ${title}`, async (t) => {
    t.timeout(BLOCK_HANG_MS * 2);
    const w = walk!;
    if (w.brokenAt !== undefined) return t.fail(`not run: the step ${w.brokenAt} did not end as the document says`);
    await body(t, w, block(name));
  });
}

/** The steps the rest of the walk stands on: one that failed stops it. */
const FOUNDATIONS: ReadonlySet<StepName> = new Set(["redis-conf", "redis-check", "migrate", "instance-home", "nginx"]);

test.afterEach.always((t) => {
  // A hook's title is "afterEach.always hook for <the test's title>".
  const name = STEPS.find((candidate) => t.title.includes(`for ${candidate}: `));
  if (name && FOUNDATIONS.has(name) && !t.passed && walk) walk.brokenAt ??= name;
});

step("redis-conf", "Redis takes the document's settings", async (t, w, doc) => {
  const admin = w.redis.client();
  const directives = doc.code
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"));
  t.true(directives.length >= 3, doc.code);
  for (const directive of directives) {
    const [name, ...value] = directive.split(/\s+/);
    await admin.config("SET", name!, value.join(" "));
    t.deepEqual(await admin.config("GET", name!), [name, value.join(" ")], directive);
  }
});

step("redis-check", "the check shows the version and the settings", async (t, w, doc) => {
  const result = await runShellBlock(w, doc);
  t.is(result.code, 0, report(doc, result));
  t.regex(result.stdout, /^redis_version:[7-9]\./m, report(doc, result));
  t.regex(result.stdout, /^noeviction$/m, report(doc, result));
  t.regex(result.stdout, /^appendonly\nyes$/m, report(doc, result));
});

step("migrate", "gw migrate moves the embedded home to Redis and the bucket", async (t, w, doc) => {
  const result = await runShellBlock(w, doc);
  t.is(result.code, 0, report(doc, result));
  // What the document says the two commands print: the balances on both sides, then the drivers.
  t.regex(result.stdout, /credits used \(this month, lifetime\), home -> Redis:\n\s+early-bird: (\d+) -> \1, (\d+) -> \2/, report(doc, result));
  t.regex(result.stdout, /^ok\s+drivers\s+state=redis/m, report(doc, result));
  t.regex(result.stdout, /^ok\s+balances\s/m, report(doc, result));
  const config = JSON.parse(readFileSync(path.join(w.homes.migrated, "config.json"), "utf8")) as {
    state: { driver: string; url: string };
    storage: { driver: string; options: Record<string, string> };
  };
  t.is(config.state.driver, "redis");
  t.is(config.state.url, "${REDIS_URL}", "the Redis URL is kept as a reference");
  t.is(config.storage.driver, "s3");
  t.is(config.storage.options.bucket, BUCKET);
  t.is(config.storage.options.accessKeyId, "${AWS_ACCESS_KEY_ID}", "credentials are written as references");
  t.is(config.storage.options.secretAccessKey, "${AWS_SECRET_ACCESS_KEY}");
  t.false(readFileSync(path.join(w.homes.migrated, "config.json"), "utf8").includes("S3RVER"), "no credential value in config.json");
  t.true(statSync(path.join(w.env.HOME!, "gw-before-redis.tar.gz")).size > 0, "the backup taken before");
  // The document says gw backup refuses on a Redis home, naming what replaces it.
  const backup = await run("gw", ["backup", "-o", path.join(w.root, "refused.tar.gz")], w.env, w.work);
  t.not(backup.code, 0, backup.stdout);
  t.regex(backup.stderr, /back up the Redis server itself/, backup.stderr);
});

step("instance-home", "each instance's home is its two local sections, and both serve", async (t, w, doc) => {
  for (const home of [w.homes.migrated, w.homes.added]) {
    const result = await runShellBlock(w, doc, { ...w.env, GW_HOME: home });
    t.is(result.code, 0, report(doc, result));
    t.deepEqual(Object.keys(JSON.parse(readFileSync(path.join(home, "config.json"), "utf8"))), ["server", "state"]);
  }
  for (const home of [w.homes.migrated, w.homes.added]) w.instances.push(await startInstance(home, w.env, w.work));
  for (const instance of w.instances) {
    t.regex(instance.log(), /config from Redis key gw:config; server and state stay as/);
    const ready = await fetch(`${instance.url}/ready`);
    t.is(ready.status, 200, await ready.clone().text());
  }
});

step("nginx", "nginx takes the document's config and reaches both instances", async (t, w, doc) => {
  t.is(doc.language, "nginx");
  const [first, second] = w.instances.map((instance) => new URL(instance.url).host);
  const conf = doc.code
    .replace("server 10.0.0.11:8787", `server ${first}`)
    .replace("server 10.0.0.12:8787", `server ${second}`)
    .replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${w.nginxPort};`)
    .replaceAll("/var/log/nginx/", `${w.root}/nginx/`);
  t.not(conf, doc.code);
  const prefix = path.join(w.root, "nginx");
  mkdirSync(path.join(prefix, "conf.d"), { recursive: true });
  writeFileSync(path.join(prefix, "conf.d/gw.conf"), conf);
  // What Debian's /etc/nginx/nginx.conf provides around conf.d, with temp folders of the test's own.
  const temp = (name: string) => `${name}_temp_path ${path.join(prefix, name)};`;
  writeFileSync(
    path.join(prefix, "nginx.conf"),
    [
      "events { worker_connections 256; }",
      "http {",
      ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((name) => `  ${temp(name)}`),
      `  include ${path.join(prefix, "conf.d/*.conf")};`,
      "}",
      "",
    ].join("\n"),
  );
  // As root, the workers would otherwise run as nobody, who cannot enter the test's 0700 folder.
  const globals = `daemon off; pid ${path.join(prefix, "nginx.pid")}; error_log ${path.join(prefix, "error.log")} notice;${process.getuid?.() === 0 ? " user root;" : ""}`;
  const args = ["-p", prefix, "-c", path.join(prefix, "nginx.conf"), "-g", globals];
  const checked = await run(nginxBinary(), ["-t", ...args], w.env, prefix);
  t.is(checked.code, 0, `nginx -t: ${checked.stderr}`);
  const child = spawn(nginxBinary(), args, { cwd: prefix, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")));
  w.nginx = { child, log: () => log, exited: new Promise((resolve) => child.on("exit", (code) => resolve(code))) };
  const health = await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${log}${readIfThere(path.join(prefix, "error.log"))}`);
      return (await fetch(`${w.publicUrl}/health`)).status;
    },
    { what: "nginx passing /health to gw", until: (status) => status === 200 },
  );
  t.is(health, 200);
  const metrics = await fetch(`${w.publicUrl}/metrics`);
  t.is(metrics.status, 404, "the load balancer does not pass /metrics on");
});

function readIfThere(file: string): string {
  return existsSync(file) ? `\n${readFileSync(file, "utf8")}` : "";
}

step("check", "the document's check passes through the load balancer", async (t, w, doc) => {
  // Run on the new instance's home: its doctor, and a key made there that works everywhere.
  const env: Record<string, string> = { ...w.env, GW_HOME: w.homes.added };
  const result = await runShellBlock(w, doc, env);
  t.is(result.code, 0, report(doc, result));
  t.regex(result.stdout, /^ok\s+drivers\s+state=redis/m, report(doc, result));
  t.regex(result.stdout, /"status":"ready"/, report(doc, result));
  t.regex(result.stdout, /echo: Say hello/, report(doc, result));
  t.regex(result.stdout, /smoke\.txt/, report(doc, result));
  const key = env.GW_API_KEY ?? "";
  t.regex(key, /^gw_/);
  for (const instance of w.instances) t.is((await keyInfo(instance.url, key)).status, 200, `the new key on ${instance.url}`);
  t.true(
    w.openai.requests.some((request) => JSON.stringify(request.body).includes("Say hello")),
    "the chat reached the vendor",
  );
});

test.serial("after the move: the old key, its spend and its file are served by every instance and through nginx", async (t) => {
  const w = walk!;
  if (w.brokenAt !== undefined) return t.fail(`not run: the step ${w.brokenAt} did not end as the document says`);
  for (const base of [...w.instances.map((instance) => instance.url), w.publicUrl]) {
    const info = await keyInfo(base, w.before.key);
    t.is(info.status, 200, base);
    t.is(info.body.data?.plan_credits.spent, w.before.spent, `the usage history carried over (${base})`);
    const redirect = await fetch(`${base}/v1/storage/files/${w.before.fileId}`, { headers: authorized(w.before.key), redirect: "manual" });
    t.is(redirect.status, 302, base);
    const link = new URL(redirect.headers.get("location") ?? "");
    t.is(link.origin, w.publicUrl, "links point at the load balancer");
    t.deepEqual(Buffer.from(await (await fetch(link)).arrayBuffer()), w.before.fileBytes);
  }
  // A link the embedded home handed out before the move still works, through the load balancer.
  const old = new URL(w.before.link);
  const again = await fetch(`${w.publicUrl}${old.pathname}${old.search}`);
  t.is(again.status, 200);
  t.deepEqual(Buffer.from(await again.arrayBuffer()), w.before.fileBytes);
});

test.serial("through nginx: a streamed completion arrives event by event, before the answer ends", async (t) => {
  const w = walk!;
  if (w.brokenAt !== undefined) return t.fail(`not run: the step ${w.brokenAt} did not end as the document says`);
  // The vendor writes its first events, then holds the rest until released: what reaches the
  // client meanwhile has passed nginx unbuffered.
  w.openai.enqueue({ holdAfterEvents: 2 });
  const response = await fetch(`${w.publicUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { ...authorized(w.before.key), "content-type": "application/json" },
    body: chatBody("stream through the balancer", true),
  });
  t.is(response.status, 200);
  t.regex(response.headers.get("content-type") ?? "", /^text\/event-stream/);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!/^data: \{/m.test(text)) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  // The vendor cannot finish before it is released: whatever arrived so far came ahead of the end.
  await eventually(() => w.openai.held() === 1, "the vendor holding the rest of the answer");
  t.regex(text, /^data: \{.*"chat\.completion\.chunk"/m, "an event arrived while the answer was unfinished");
  t.notRegex(text, /\[DONE\]/);
  w.openai.releaseHeld();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
  t.true(text.trimEnd().endsWith("data: [DONE]"), text);
});

test.serial("through nginx: an upload is listed and downloaded through every instance", async (t) => {
  const w = walk!;
  if (w.brokenAt !== undefined) return t.fail(`not run: the step ${w.brokenAt} did not end as the document says`);
  // Past one 8 MiB part: a multipart upload into the bucket, streamed through nginx.
  const bytes = randomBytes(9 * 1024 * 1024);
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(bytes)], { type: "application/octet-stream" }), "big.bin");
  const uploaded = await fetch(`${w.publicUrl}/v1/storage/upload`, { method: "POST", headers: authorized(w.before.key), body: form });
  t.is(uploaded.status, 201, await uploaded.clone().text());
  const { id } = ((await uploaded.json()) as { data: { id: string } }).data;
  for (const instance of w.instances) {
    const redirect = await fetch(`${instance.url}/v1/storage/files/${id}`, { headers: authorized(w.before.key), redirect: "manual" });
    t.is(redirect.status, 302);
    const link = new URL(redirect.headers.get("location") ?? "");
    const direct = await fetch(`${instance.url}${link.pathname}${link.search}`);
    t.is(direct.status, 200);
    t.true(Buffer.from(await direct.arrayBuffer()).equals(bytes), `downloaded from ${instance.url}`);
  }
  const ready = await fetch(`${w.publicUrl}/ready`);
  t.is(ready.status, 200);
  t.like(await ready.json(), { checks: { state: "ok", blob_store: "ok" } });
});

step("backup", "the Redis snapshot command writes an RDB file", async (t, w, doc) => {
  const result = await runShellBlock(w, doc);
  t.is(result.code, 0, report(doc, result));
  const snapshots = readdirSync(w.env.HOME!).filter((name) => /^gw-redis-\d{8}T\d{6}Z\.rdb$/.test(name));
  t.is(snapshots.length, 1, readdirSync(w.env.HOME!).join(", "));
  t.is(readFileSync(path.join(w.env.HOME!, snapshots[0]!)).subarray(0, 5).toString("latin1"), "REDIS");
});

test.serial("the instances stop cleanly, nothing left waiting in an outbox", async (t) => {
  const w = walk!;
  if (w.brokenAt !== undefined) return t.fail(`not run: the step ${w.brokenAt} did not end as the document says`);
  for (const instance of w.instances) {
    t.is(await stopProcess(instance.child, instance.exited), 0, instance.log());
    const outbox = path.join(instance.home, "data/usage-outbox.jsonl");
    t.true(!existsSync(outbox) || statSync(outbox).size === 0, `${outbox} is empty`);
  }
});
