// Compare two builds of gw on the chat path: `node scripts/bench-ab.mjs BASE_REV [options]`.
//
// Whole-run throughput on a small VM drifts by up to 20% from one minute to the next, so a change
// worth 5-15% cannot be read from two separate `npm run bench` runs. This runs the base revision
// (built in a temporary git worktree) and the working tree (built with `npm run build` first) side
// by side on the shared harness's fake upstream: both gateways alive, short runs alternating, the
// order reversed every pair (without that, two identical builds read ~16% apart), CPU per request
// read from /proc. It prints each pair and the median of the paired ratios.
//
// Options: --mode stream|nonstream (stream), -c N (64), --pairs N (12), --seconds N (2),
// --warmup-pairs N (4, not counted, after an 8-second load on each gateway), --telemetry
// http/protobuf|http/json (the working tree's gateway exports traces to a sink that discards them,
// bench/start-gw.sh; the base's does not: `bench-ab.mjs HEAD --telemetry http/protobuf` on a clean
// tree is the cost of traces on against off), --node-flags=... (Node/V8 flags for the working
// tree's gateway only, given with "=" since parseArgs refuses a separate value starting with "--":
// `bench-ab.mjs HEAD --node-flags=--max-semi-space-size=4` on a clean tree is what the flags cost
// and save; each gateway's peak RSS is printed). The gateways get
// core 1, loadgen and upstream core 0 (taskset). As root it runs in a private network namespace
// with only loopback, as the harness does; otherwise on the host's loopback.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { cpuMs, harnessLoad, listening, median, peakRssMiB, pinned } from "./bench-processes.mjs";

const root = path.resolve(import.meta.dirname, "..");
const harness = process.env.GW_BENCH_HARNESS ?? path.resolve(root, "../shared/bench");
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    mode: { type: "string", default: "stream" },
    c: { type: "string", short: "c", default: "64" },
    pairs: { type: "string", default: "12" },
    seconds: { type: "string", default: "2" },
    "warmup-pairs": { type: "string", default: "4" },
    telemetry: { type: "string" },
    "node-flags": { type: "string" },
    "in-namespace": { type: "boolean", default: false },
  },
});
const [baseRevision] = positionals;
if (!baseRevision) {
  console.error("usage: node scripts/bench-ab.mjs BASE_REV [--mode stream|nonstream] [-c 64] [--pairs 12] [--seconds 2] [--telemetry http/protobuf|http/json]");
  process.exit(2);
}
if (!existsSync(path.join(harness, "bench.mjs"))) {
  console.error(`bench-ab: the load harness is not at ${harness} (set GW_BENCH_HARNESS)`);
  process.exit(1);
}

// Re-run inside a private network namespace with only loopback, as the harness does, when allowed.
if (!values["in-namespace"]) {
  let isolated = false;
  try {
    execFileSync("unshare", ["-n", "true"], { stdio: "ignore" });
    isolated = true;
  } catch {
    console.error("bench-ab: unshare -n not permitted; running on the host loopback");
  }
  if (isolated) {
    const args = [process.argv[1], ...process.argv.slice(2), "--in-namespace"].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(" ");
    const child = spawn("unshare", ["-n", "bash", "-c", `ip link set lo up && exec node ${args}`], { stdio: "inherit" });
    child.on("exit", (code) => process.exit(code ?? 1));
  } else {
    await main();
  }
} else {
  await main();
}

async function main() {
  const work = mkdtempSync(path.join(tmpdir(), "gw-bench-ab-"));
  const baseTree = path.join(work, "base");
  const children = [];
  try {
    execFileSync("git", ["-C", root, "worktree", "add", "--detach", "-q", baseTree, baseRevision], { stdio: "inherit" });
    symlinkSync(path.join(root, "node_modules"), path.join(baseTree, "node_modules"));
    execFileSync("npm", ["run", "-s", "build"], { cwd: baseTree, stdio: ["ignore", "ignore", "inherit"] });

    const upstreamPort = 18780;
    children.push(pinned(0, "node", [path.join(harness, "fake-upstream.mjs"), String(upstreamPort)]));
    const gateways = [];
    for (const [name, tree, port] of [
      ["base", baseTree, 18781],
      ["this", root, 18782],
    ]) {
      const env = {
        ...(name === "this" && values.telemetry ? { GW_BENCH_TELEMETRY: values.telemetry } : {}),
        ...(name === "this" && values["node-flags"] ? { GW_NODE_FLAGS: values["node-flags"] } : {}),
      };
      const child = pinned(1, "bash", [path.join(tree, "bench/start-gw.sh"), String(port), `http://127.0.0.1:${upstreamPort}/v1`], env);
      children.push(child);
      await listening(child);
      // taskset and start-gw.sh exec into `gw serve`: the child's pid is the gateway's.
      gateways.push({ name: `${name} (${name === "base" ? baseRevision : "working tree"})`, port, pid: child.pid, runs: [] });
    }

    // JIT warm-up: a first load on each gateway, then warm-up pairs, none of them counted.
    for (const gateway of gateways) load(gateway.port, 8);
    const total = Number(values.pairs) + Number(values["warmup-pairs"]);
    for (let pair = 0; pair < total; pair++) {
      const order = pair % 2 === 0 ? gateways : [...gateways].reverse();
      for (const gateway of order) {
        const before = cpuMs(gateway.pid);
        const result = load(gateway.port);
        const cpuPerRequest = ((cpuMs(gateway.pid) - before) * 1000) / result.requests;
        if (pair >= Number(values["warmup-pairs"])) gateway.runs.push({ rps: result.rps, cpuPerRequest });
      }
    }

    const [base, current] = gateways;
    const traces = values.telemetry ? `, traces on (${values.telemetry}) for the working tree` : "";
    const flags = values["node-flags"] ? `, node flags ${values["node-flags"]} for the working tree` : "";
    console.log(`mode=${values.mode} c=${values.c} ${values.seconds}s runs, ${values.pairs} pairs (order alternated)${traces}${flags}`);
    for (const gateway of gateways) {
      console.log(`${gateway.name.padEnd(28)} rps ${gateway.runs.map((run) => run.rps.toFixed(0)).join(" ")}`);
      console.log(`${"".padEnd(28)} cpu µs/request ${gateway.runs.map((run) => run.cpuPerRequest.toFixed(0)).join(" ")}`);
      console.log(`${"".padEnd(28)} peak RSS ${peakRssMiB(gateway.pid)} MiB`);
    }
    const ratio = (pick) => median(current.runs.map((run, index) => pick(run) / pick(base.runs[index])));
    console.log(
      `median of paired ratios, this / base: rps ${ratio((run) => run.rps).toFixed(3)}, cpu per request ${ratio((run) => run.cpuPerRequest).toFixed(3)}`,
    );
  } finally {
    for (const child of children.reverse()) child.kill("SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 500));
    execFileSync("git", ["-C", root, "worktree", "remove", "--force", baseTree], { stdio: "ignore" });
    rmSync(work, { recursive: true, force: true });
  }
}

function load(port, seconds = values.seconds) {
  return harnessLoad(harness, port, { mode: values.mode, concurrency: values.c, seconds });
}
