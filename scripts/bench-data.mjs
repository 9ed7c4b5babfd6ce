// Data at scale: `node scripts/bench-data.mjs [--rows 1000000] [--files 100000] [--runs 3]
// [--root DIR] [--keep] [--work DIR]` (the working tree's dist/: `npm run build` first;
// GW_BENCH_NO_DATA=1 makes scripts/bench.sh skip it). `--root DIR` measures another built checkout
// beside this one (a "before"), their runs interleaved run by run; `--keep` keeps the homes and
// `--work DIR` runs on homes a former run kept (nothing is written again).
//
// Two homes made by `gw init`, with the same agents and keys (through dist/src/store/provisioning.js,
// as bench/start-gw.sh makes its key): one with an empty usage log, one with a month of `--rows`
// usage rows, written by the gateway's own writer (dist/src/store/usage-log.js `UsageLog.append`,
// so the lines, the high-water mark and the derived files are what a server leaves) with times
// spread from the 1st of this month (UTC) to now. Measured with whole-process timers:
//   - `gw serve --port 0`: spawn to its first line (`listening on …`) and to GET /ready's 200,
//     its RSS then and its peak (VmHWM) so far; the median of `--runs` starts, each stopped by
//     SIGTERM (a clean stop, as an operator's). "cold" starts first remove every derived file in
//     data/usage (all but the YYYY-MM.jsonl logs: what a backup leaves out), i.e. a start after a
//     crash, an upgrade or a restore.
//   - with the shared harness's fake upstream (GW_BENCH_HARNESS, ../shared/bench), chat requests
//     one at a time against each home: the chat figures must not move with the log.
//   - `gw usage` and its variants, stdout to /dev/null: wall time (median) and peak RSS (max, by
//     /usr/bin/time -f %M).
// Then `--files` stored files for one agent, records written in the exact form the storage index
// writes them (dist/src/store/file-records.js: `<data>/storage/records/<agent>/<id>.json`, one JSON
// line) with ids from the gateway's own generator and a small blob each: FileRecordStore.save
// fsyncs every record, which would make setting up 100,000 of them take minutes without changing
// what the server reads at start. GET /v1/storage/files?limit=100 is timed at its first, middle
// and last page (median of `--requests`, with the server's CPU per request from /proc), and
// `gw storage list` at the same pages.
// other% is the CPU the rest of the machine used meanwhile, in % of one core (the harness's
// noise figure): above ~15 the figures are noisy.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { cpuMs, median } from "./bench-processes.mjs";

const root = path.resolve(import.meta.dirname, "..");
const dist = path.join(root, "dist", "src");
const harness = process.env.GW_BENCH_HARNESS ?? path.resolve(root, "../shared/bench");
const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "1000000" },
    files: { type: "string", default: "100000" },
    runs: { type: "string", default: "3" },
    requests: { type: "string", default: "30" },
    "chat-requests": { type: "string", default: "1000" },
    "no-usage": { type: "boolean", default: false },
    "no-storage": { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    /** A folder of homes a former run kept (--keep): reused as they are, nothing written again. */
    work: { type: "string" },
    /** Another built checkout measured beside this one, run for run (a "before"). */
    root: { type: "string", multiple: true, default: [] },
  },
});
/** The checkouts measured, each row's runs interleaved between them: this one first. */
const trees = [root, ...values.root.map((other) => path.resolve(other))].map((tree, index) => ({
  name: index === 0 ? "this" : path.basename(tree),
  gw: path.join(tree, "bin", "run.js"),
}));
const gw = trees[0].gw;
const ROWS = Number(values.rows);
const FILES = Number(values.files);
const RUNS = Number(values.runs);
const REQUESTS = Number(values.requests);
const CHAT_REQUESTS = Number(values["chat-requests"]);
const BENCH_KEY = "gw_benchbenchbenchbenchbenchbenchbenchbenchbenchbe";
const AGENTS = 20;
const KEYS_PER_AGENT = 3;
const MiB = 1024 * 1024;

const { MetadataStore } = await import(path.join(dist, "store/metadata-store.js"));
const { createKey, importKey } = await import(path.join(dist, "store/provisioning.js"));
const { UsageLog } = await import(path.join(dist, "store/usage-log.js"));
const { newFileId } = await import(path.join(dist, "gateway/storage/stored-file.js"));

const reuse = values.work !== undefined;
const work = values.work ?? mkdtempSync(path.join(tmpdir(), "gw-bench-data-"));
mkdirSync(work, { recursive: true });
const children = new Set();
// Stopped early (Ctrl-C, kill): no server is left holding a home's lock.
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    for (const child of children) child.kill("SIGKILL");
    process.exit(130);
  });
}
const upstream = await startUpstream();
const LABEL_WIDTH = 64;
try {
  if (!values["no-usage"]) await usageBench();
  if (!values["no-storage"]) await storageBench();
} finally {
  for (const child of children) child.kill("SIGKILL");
  if (values.keep || reuse) console.log(`homes kept in ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

// --- the usage log ------------------------------------------------------------------------------

async function usageBench() {
  const fresh = !existsSync(path.join(work, "full"));
  const empty = await makeHome("empty");
  const full = await makeHome("full");
  if (fresh) {
    const written = await writeRows(full, ROWS);
    console.log(
      `wrote ${ROWS.toLocaleString("en-US")} rows (${(written.bytes / MiB).toFixed(0)} MiB) through UsageLog.append in ${(written.ms / 1000).toFixed(1)} s`,
    );
  }
  heading("usage log");
  const homes = [
    ["empty log", empty.home],
    [`${(ROWS / 1e6).toLocaleString("en-US")}M rows`, full.home],
  ];
  for (const [label, home] of homes) {
    for (const cold of [true, false]) {
      await interleaved(
        `gw serve, ${label}${cold ? ", cold" : ""}`,
        async (tree) => {
          if (cold) removeDerivedUsageFiles(home);
          return timedStart(tree, home);
        },
        startFigures,
      );
    }
  }
  if (upstream) {
    for (const [label, home] of homes) {
      await interleaved(
        `chat c=1 x${CHAT_REQUESTS}, ${label}`,
        async (tree) => {
          const server = await startServer(tree, home);
          try {
            return await chatLatency(server.url, CHAT_REQUESTS, server.child.pid);
          } finally {
            await stopServer(server.child);
          }
        },
        (runs) => ({
          "p50 ms": median(runs.map((run) => run.p50)),
          "p90 ms": median(runs.map((run) => run.p90)),
          "CPU ms/req": median(runs.map((run) => run.cpuPerRequest)),
        }),
        1,
      );
    }
  }
  const variants = [
    ["usage"],
    ["usage", "--json"],
    ["usage", "--by", "agent"],
    ["usage", "--format", "csv"],
    ["usage", "--by", "model"],
    ["usage", "--by", "day"],
    ["usage", "--by", "key"],
    ["usage", "--by", "tag"],
    ["usage", "--rows"],
    ["keys", "list"],
  ];
  for (const args of variants) {
    for (const [label, home] of homes) {
      await interleaved(`gw ${args.join(" ")}, ${label}`, async (tree) => timedCommand(tree, [...args, "--home", home]), commandFigures);
    }
  }
}

/** A month's rows from the 1st (UTC) to now, spread evenly, in the mix a busy gateway writes. */
async function writeRows(made, count) {
  const started = performance.now();
  const log = UsageLog.open(path.join(made.home, "data", "usage"));
  const now = Date.now();
  const monthStart = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1);
  const span = Math.max(1, now - 60_000 - monthStart);
  const calls = [
    { endpoint: "chat.completions", model: "openai/gpt-4o-mini", provider: "openai", weight: 50 },
    { endpoint: "chat.completions", model: "anthropic/claude-sonnet-4", provider: "anthropic", weight: 15 },
    { endpoint: "messages", model: "anthropic/claude-sonnet-4", provider: "anthropic", weight: 10 },
    { endpoint: "responses", model: "openai/gpt-4o", provider: "openai", weight: 10 },
    { endpoint: "embeddings", model: "openai/text-embedding-3-small", provider: "openai", weight: 10 },
    { endpoint: "image.generations", model: "openai/gpt-image-1", provider: "openai", weight: 5 },
  ];
  const deck = calls.flatMap((call) => Array.from({ length: call.weight }, () => call));
  const batch = 10_000;
  for (let first = 0; first < count; first += batch) {
    const writes = [];
    for (let index = first; index < Math.min(count, first + batch); index += 1) {
      const call = deck[index % deck.length];
      const key = made.keys[(index * 7) % made.keys.length];
      const units =
        call.endpoint === "image.generations"
          ? { images: 1, megapixels: 1.05 }
          : call.endpoint === "embeddings"
            ? { input_tokens: 200 + (index % 800) }
            : { input_tokens: 300 + (index % 1700), output_tokens: 50 + (index % 450) };
      const row = {
        id: crypto.randomUUID(),
        time: new Date(monthStart + Math.floor((span * index) / count)).toISOString(),
        agent: key.agentId,
        keyPrefix: key.prefix,
        endpoint: call.endpoint,
        model: call.model,
        provider: call.provider,
        units,
        credits: 40 + ((index * 37) % 9000),
        requestId: `req_${index.toString(36).padStart(10, "0")}`,
      };
      if (index % 10 === 0) row.tags = [`customer:c${index % 13}`, ...(index % 20 === 0 ? ["env:prod"] : [])];
      if (index % 1000 === 7) row.overage = 25;
      writes.push(log.append(row));
    }
    await Promise.all(writes);
  }
  log.close();
  const file = path.join(made.home, "data", "usage", `${new Date(now).toISOString().slice(0, 7)}.jsonl`);
  return { ms: performance.now() - started, bytes: readFileSync(file).byteLength };
}

/** Everything in data/usage but the logs: what a backup leaves out and a start rebuilds. */
function removeDerivedUsageFiles(home) {
  const directory = path.join(home, "data", "usage");
  for (const name of readdirSync(directory)) if (!/^\d{4}-\d{2}\.jsonl$/.test(name)) rmSync(path.join(directory, name), { recursive: true, force: true });
}

async function chatLatency(url, count, pid) {
  const body = JSON.stringify({ model: "bench/fake-model", max_tokens: 64, temperature: 0, messages: [{ role: "user", content: "Say something short." }] });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const call = () =>
    new Promise((resolve, reject) => {
      const request = http.request(
        `${url}/v1/chat/completions`,
        { method: "POST", agent, headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` } },
        (response) => {
          response.resume();
          response.on("end", () => (response.statusCode === 200 ? resolve() : reject(new Error(`chat answered ${response.statusCode}`))));
        },
      );
      request.on("error", reject);
      request.end(body);
    });
  for (let index = 0; index < 200; index += 1) await call(); // warm-up
  const latencies = [];
  const cpuBefore = cpuMs(pid);
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    await call();
    latencies.push(performance.now() - started);
  }
  const cpuPerRequest = (cpuMs(pid) - cpuBefore) / count;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { p50: median(latencies), p90: latencies[Math.floor(latencies.length * 0.9)], cpuPerRequest };
}

// --- stored files -------------------------------------------------------------------------------

async function storageBench() {
  const fresh = !existsSync(path.join(work, "files"));
  const made = await makeHome("files");
  if (fresh) {
    const started = performance.now();
    writeFiles(made.home, made.bench.agentId, FILES);
    console.log(`wrote ${FILES.toLocaleString("en-US")} file records and blobs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  heading("stored files");
  await interleaved(`gw serve, ${FILES.toLocaleString("en-US")} files`, (tree) => timedStart(tree, made.home), startFigures);
  const limit = 100;
  const pages = Math.ceil(FILES / limit);
  // One server per checkout (one per home at a time), each page measured on it.
  for (const tree of trees) {
    const server = await startServer(tree, made.home);
    try {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      for (const page of [1, Math.ceil(pages / 2), pages]) {
        const pageNoise = noiseMeter();
        const url = `${server.url}/v1/storage/files?page=${page}&limit=${limit}`;
        for (let index = 0; index < 5; index += 1) await getJson(url, agent); // warm-up
        const latencies = [];
        const cpuBefore = cpuMs(server.child.pid);
        let body;
        for (let index = 0; index < REQUESTS; index += 1) {
          const begun = performance.now();
          body = await getJson(url, agent);
          latencies.push(performance.now() - begun);
        }
        const cpu = (cpuMs(server.child.pid) - cpuBefore) / REQUESTS;
        if (body.pagination.total !== FILES || body.data.length !== Math.min(limit, FILES - (page - 1) * limit)) {
          throw new Error(`page ${page} listed ${body.data.length} of ${body.pagination.total} files`);
        }
        row(`GET /v1/storage/files page ${page} of ${pages} (limit ${limit})${suffix(tree)}`, {
          "p50 ms": median(latencies),
          "max ms": Math.max(...latencies),
          "CPU ms/req": cpu,
          other: pageNoise(),
        });
      }
      agent.destroy();
      const env = { GW_BASE_URL: server.url, GW_API_KEY: BENCH_KEY };
      for (const page of [1, Math.ceil(pages / 2), pages]) {
        const listNoise = noiseMeter();
        const runs = [];
        for (let run = 0; run < RUNS; run += 1)
          runs.push(timedCommand(tree, ["storage", "list", "--page", String(page), "--limit", String(limit), "--json"], env));
        row(`gw storage list --page ${page} --limit ${limit} --json${suffix(tree)}`, { ...commandFigures(runs), other: listNoise() });
      }
    } finally {
      await stopServer(server.child);
    }
  }
}

/** Records as FileRecordStore.save writes them (one JSON line each), ids from the gateway's generator, oldest first. */
function writeFiles(home, agentId, count) {
  const records = path.join(home, "data", "storage", "records", agentId);
  const blobs = path.join(home, "data", "blobs", agentId);
  mkdirSync(records, { recursive: true });
  mkdirSync(blobs, { recursive: true });
  const first = Date.now() - count * 1000;
  const body = Buffer.from("bench file\n");
  for (let index = 0; index < count; index += 1) {
    const created = first + index * 1000;
    const id = newFileId(created);
    const record = {
      id,
      agentId,
      filename: `report-${index}.txt`,
      contentType: "text/plain",
      sizeBytes: body.byteLength,
      createdAt: new Date(created).toISOString(),
      state: "ready",
    };
    writeFileSync(path.join(records, `${id}.json`), `${JSON.stringify(record)}\n`);
    writeFileSync(path.join(blobs, id), body);
  }
}

function getJson(url, agent) {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, headers: { authorization: `Bearer ${BENCH_KEY}` } }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () =>
        response.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`${url} answered ${response.statusCode}: ${text}`)),
      );
    });
    request.on("error", reject);
  });
}

// --- homes, servers, commands ---------------------------------------------------------------------

/** `gw init`, a plan without practical limits, the fake upstream's route, and AGENTS x KEYS_PER_AGENT keys plus the bench key. */
async function makeHome(name) {
  const home = path.join(work, name);
  const kept = existsSync(home);
  if (!kept) execFileSync(process.execPath, [gw, "init", "--home", home], { stdio: "ignore" });
  const configFile = path.join(home, "config.json");
  const config = JSON.parse(readFileSync(configFile, "utf8"));
  config.plans = { ...config.plans, max: { requestsPerMinute: 100000000, monthlyCredits: 1000000000000 } };
  // This run's fake upstream (a kept home's config names the last run's port).
  if (upstream) {
    config.providers = { bench: { type: "openai", baseUrl: upstream.url, apiKey: "sk-bench-not-a-real-key" } };
    config.routes = [{ prefix: "bench/", provider: "bench", priority: 1 }];
    config.models = [{ id: "bench/fake-model", name: "Bench fake model", context_length: 8192 }];
  }
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  if (kept) return keptHome(home);
  const store = await MetadataStore.open(path.join(home, "data", "metadata.json"));
  const keys = [];
  try {
    for (let agent = 0; agent < AGENTS; agent += 1) {
      for (let key = 0; key < KEYS_PER_AGENT; key += 1) {
        const created = await createKey(store, `team-${agent}`, "max", "max", { name: `team-${agent}-key-${key}` });
        keys.push({ agentId: created.agent.id, prefix: created.record.prefix });
      }
    }
    const bench = await importKey(store, "bench", "max", BENCH_KEY);
    return { home, keys, bench: { agentId: bench.agent.id, prefix: bench.record.prefix } };
  } finally {
    store.close();
  }
}

/** A home a former run made: its keys from the metadata. */
function keptHome(home) {
  const { agents, keys } = JSON.parse(readFileSync(path.join(home, "data", "metadata.json"), "utf8"));
  const bench = agents.find((agent) => agent.name === "bench");
  const benchKey = keys.find((key) => key.agentId === bench.id);
  return { home, keys: keys.map((key) => ({ agentId: key.agentId, prefix: key.prefix })), bench: { agentId: bench.id, prefix: benchKey.prefix } };
}

function startServer(tree, home) {
  const child = spawn(process.execPath, [tree.gw, "serve", "--home", home, "--host", "127.0.0.1", "--port", "0", "--log-level", "warn"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let errors = "";
  child.stderr.on("data", (chunk) => (errors += chunk));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", (line) =>
      resolve({ child, url: line.replace(/^listening on /, ""), firstLineAt: performance.now() }),
    );
    child.once("exit", (code) => reject(new Error(`gw serve exited ${code}: ${errors}`)));
  });
}

/** Spawn to the first line, then to /ready's 200; RSS once ready and the peak so far. */
async function timedStart(tree, home) {
  const started = performance.now();
  const server = await startServer(tree, home);
  const firstLineMs = server.firstLineAt - started;
  for (;;) {
    const status = await new Promise((resolve) => {
      http
        .get(`${server.url}/ready`, (response) => {
          response.resume();
          response.on("end", () => resolve(response.statusCode));
        })
        .on("error", () => resolve(0));
    });
    if (status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const readyMs = performance.now() - started;
  const status = readFileSync(`/proc/${server.child.pid}/status`, "utf8");
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)[1]);
  const memory = { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
  await stopServer(server.child);
  return { firstLineMs, readyMs, ...memory };
}

function stopServer(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => {
      children.delete(child);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** A gw command, stdout to /dev/null: its wall time and peak RSS (/usr/bin/time -f %M, KiB). */
function timedCommand(tree, args, env = {}) {
  const started = performance.now();
  const result = spawnSync("/usr/bin/time", ["-f", "gw-bench-peak %M", process.execPath, tree.gw, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...env },
    encoding: "utf8",
    maxBuffer: 64 * MiB,
  });
  const ms = performance.now() - started;
  if (result.signal) {
    // Killed from outside (other work shares the machine): measured again rather than lost.
    console.log(`(gw ${args.join(" ")} was killed by ${result.signal}; run again)`);
    return timedCommand(tree, args, env);
  }
  if (result.status !== 0) throw new Error(`gw ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  const peak = /gw-bench-peak (\d+)/.exec(result.stderr);
  return { ms, peakMiB: Number(peak?.[1]) / 1024 };
}

async function startUpstream() {
  if (!existsSync(path.join(harness, "fake-upstream.mjs"))) {
    console.log(`(no fake upstream at ${harness}: the chat rows are left out; set GW_BENCH_HARNESS)`);
    return null;
  }
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(harness, "fake-upstream.mjs"), String(port)], { stdio: "ignore" });
  children.add(child);
  const url = `http://127.0.0.1:${port}/v1`;
  for (let waited = 0; waited < 10_000; waited += 50) {
    const up = await new Promise((resolve) => {
      http
        .get(`${url}/models`, (response) => {
          response.resume();
          resolve(true);
        })
        .on("error", () => resolve(false));
    });
    if (up) return { url, child };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the fake upstream did not start");
}

/** A port nothing listens on now (other benchmarks may run beside this one). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// --- figures ------------------------------------------------------------------------------------

/**
 * CPU the rest of the machine used from now to the call, in % of one core: all busy time from
 * /proc/stat less this process tree's (this script, its servers, fake upstream and commands).
 */
function noiseMeter() {
  const busyBefore = machineBusyMs();
  const ownBefore = ownCpuMs();
  const started = performance.now();
  return () => {
    const seconds = (performance.now() - started) / 1000;
    const other = machineBusyMs() - busyBefore - (ownCpuMs() - ownBefore);
    return Math.max(0, other / 10 / seconds);
  };
}

function machineBusyMs() {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + fields[4];
  return ((fields.slice(0, 8).reduce((sum, value) => sum + value, 0) - idle) * 1000) / 100;
}

/** This process, its live children, and its waited-for children (utime/stime and cutime/cstime). */
function ownCpuMs() {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  let total = ((Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  for (const child of children) {
    try {
      total += cpuMs(child.pid);
    } catch {
      // gone meanwhile: its time is in cutime once waited for
    }
  }
  return total;
}

/**
 * `RUNS` runs of `measure` on each checkout, interleaved run by run (the machine's load drifts from
 * one minute to the next), then a row per checkout: `figures` of its runs and the noise meanwhile.
 */
async function interleaved(label, measure, figures, runs = RUNS) {
  const noise = noiseMeter();
  const results = trees.map(() => []);
  for (let run = 0; run < runs; run += 1) {
    for (const [index, tree] of trees.entries()) results[index].push(await measure(tree));
  }
  const other = noise();
  for (const [index, tree] of trees.entries()) row(`${label}${suffix(tree)}`, { ...figures(results[index]), other });
}

function suffix(tree) {
  return trees.length > 1 ? ` [${tree.name}]` : "";
}

function startFigures(starts) {
  return {
    "first line ms": median(starts.map((start) => start.firstLineMs)),
    "/ready ms": median(starts.map((start) => start.readyMs)),
    "RSS MiB": median(starts.map((start) => start.rssMiB)),
    "peak MiB": Math.max(...starts.map((start) => start.peakMiB)),
  };
}

function commandFigures(runs) {
  return { "wall ms": median(runs.map((run) => run.ms)), "peak MiB": Math.max(...runs.map((run) => run.peakMiB)) };
}

/** A row of the table, printed at once (a long run shows its figures as it goes). */
function row(label, figures) {
  const cells = Object.entries(figures).map(([name, value]) => `${name} ${name === "other" ? `${value.toFixed(0)}%` : value.toFixed(value < 10 ? 2 : 0)}`);
  console.log(`${label.padEnd(LABEL_WIDTH)}  ${cells.join("  ")}`);
}

function heading(title) {
  console.log(`\n${title}`);
}
