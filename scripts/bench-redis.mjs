// The chat path on Redis against the embedded default, same build, same run:
// `node scripts/bench-redis.mjs [--mode stream|nonstream] [-c 64] [--pairs 8] [--seconds 2]`.
//
// Starts a redis-server (Debian's; no persistence, a unix socket) and two `gw serve` of this tree
// on the shared harness's fake upstream: one on the embedded state, one with `state.driver: redis`
// (bench/start-gw.sh with GW_BENCH_REDIS). Short runs alternate, order reversed every pair, as
// bench-ab.mjs does; CPU per request is read from /proc for gw and, on the Redis side, for
// redis-server too. Then c=1 runs give each side's p50, whose difference is what Redis adds to a
// request's latency (its round trips: a hold, a take of the rate bucket, a settle).
// The gateways get core 1; loadgen, upstream and redis-server core 0 (Redis would be on its own
// machine in a deployment).
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { cpuMs, harnessLoad, harnessLoadAsync, listening, median, pinned } from "./bench-processes.mjs";

const root = path.resolve(import.meta.dirname, "..");
const harness = process.env.GW_BENCH_HARNESS ?? path.resolve(root, "../shared/bench");
const { values } = parseArgs({
  options: {
    mode: { type: "string", default: "nonstream" },
    c: { type: "string", short: "c", default: "64" },
    pairs: { type: "string", default: "8" },
    seconds: { type: "string", default: "2" },
    "warmup-pairs": { type: "string", default: "3" },
    "c1-pairs": { type: "string", default: "6" },
  },
});
if (!existsSync(path.join(harness, "bench.mjs"))) {
  console.error(`bench-redis: the load harness is not at ${harness} (set GW_BENCH_HARNESS)`);
  process.exit(1);
}

const work = mkdtempSync(path.join(tmpdir(), "gw-bench-redis-"));
const socket = path.join(work, "redis.sock");
const children = [];
try {
  const redis = pinned(0, "redis-server", ["--port", "0", "--unixsocket", socket, "--dir", work, "--save", "", "--appendonly", "no"]);
  children.push(redis);
  for (let waited = 0; !existsSync(socket); waited += 50) {
    if (waited > 30_000) throw new Error(`redis-server did not start: ${redis.output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const upstreamPort = 18790;
  children.push(pinned(0, "node", [path.join(harness, "fake-upstream.mjs"), String(upstreamPort)]));
  const gateways = [];
  for (const [name, port, env] of [
    ["embedded", 18791, {}],
    ["redis", 18792, { GW_BENCH_REDIS: socket, GW_BENCH_REDIS_PREFIX: "bench:" }],
  ]) {
    Object.assign(process.env, { GW_BENCH_REDIS: "" }, env);
    const child = pinned(1, "bash", [path.join(root, "bench/start-gw.sh"), String(port), `http://127.0.0.1:${upstreamPort}/v1`]);
    children.push(child);
    await listening(child);
    gateways.push({ name, port, pid: child.pid, extraPid: name === "redis" ? redis.pid : undefined, runs: [], p50: [] });
  }
  delete process.env.GW_BENCH_REDIS;

  for (const gateway of gateways) load(gateway.port, values.c, 8);
  const total = Number(values.pairs) + Number(values["warmup-pairs"]);
  for (let pair = 0; pair < total; pair++) {
    const order = pair % 2 === 0 ? gateways : [...gateways].reverse();
    for (const gateway of order) {
      const before = cpuMs(gateway.pid);
      const extraBefore = gateway.extraPid ? cpuMs(gateway.extraPid) : 0;
      const result = load(gateway.port, values.c, values.seconds);
      const cpuPerRequest = ((cpuMs(gateway.pid) - before) * 1000) / result.requests;
      const redisPerRequest = gateway.extraPid ? ((cpuMs(gateway.extraPid) - extraBefore) * 1000) / result.requests : 0;
      if (pair >= Number(values["warmup-pairs"])) gateway.runs.push({ rps: result.rps, cpuPerRequest, redisPerRequest });
    }
  }
  for (let pair = 0; pair < Number(values["c1-pairs"]); pair++)
    for (const gateway of pair % 2 ? [...gateways].reverse() : gateways) gateway.p50.push(load(gateway.port, "1", 2).latMs.p50);
  // What a request asks of Redis: the commands gw sent (scripts count once; what they run inside
  // is not a round trip), read from MONITOR over one more c=1 run.
  const monitor = spawn("redis-cli", ["-s", socket, "monitor"], { stdio: ["ignore", "pipe", "ignore"] });
  let monitored = "";
  monitor.stdout.on("data", (chunk) => {
    monitored += chunk;
  });
  await new Promise((resolve) => monitor.stdout.once("data", resolve)); // its "OK"
  // Not execFileSync: MONITOR's output is read while the load runs.
  const counted = await harnessLoadAsync(harness, gateways[1].port, { mode: values.mode, concurrency: "1", seconds: 2 });
  const closed = new Promise((resolve) => monitor.once("close", resolve));
  monitor.kill();
  await closed;
  const commandsSent = {};
  for (const line of monitored.split("\n")) {
    const command = /^\d+\.\d+ \[\d+ (?!lua)[^\]]*\] "([^"]+)"/.exec(line)?.[1]?.toLowerCase();
    if (command) commandsSent[command] = (commandsSent[command] ?? 0) + 1;
  }

  const [embedded, shared] = gateways;
  console.log(`mode=${values.mode} c=${values.c} ${values.seconds}s runs, ${values.pairs} pairs (order alternated); then c=1`);
  for (const gateway of gateways) {
    console.log(`${gateway.name.padEnd(10)} rps ${gateway.runs.map((run) => run.rps.toFixed(0)).join(" ")}`);
    console.log(`${"".padEnd(10)} gw cpu µs/request ${gateway.runs.map((run) => run.cpuPerRequest.toFixed(0)).join(" ")}`);
    if (gateway.extraPid) console.log(`${"".padEnd(10)} redis-server cpu µs/request ${gateway.runs.map((run) => run.redisPerRequest.toFixed(0)).join(" ")}`);
    console.log(`${"".padEnd(10)} c=1 p50 ms ${gateway.p50.map((value) => value.toFixed(3)).join(" ")}`);
  }
  const ratio = (pick) => median(shared.runs.map((run, index) => pick(run) / pick(embedded.runs[index])));
  console.log(
    `median of paired ratios, redis / embedded: rps ${ratio((run) => run.rps).toFixed(3)}, gw cpu per request ${ratio((run) => run.cpuPerRequest).toFixed(3)}; ` +
      `redis-server cpu per request ${median(shared.runs.map((run) => run.redisPerRequest)).toFixed(0)} µs; ` +
      `c=1 p50 ${median(embedded.p50).toFixed(3)} ms embedded, ${median(shared.p50).toFixed(3)} ms redis`,
  );
  // One Redis round trip at c=1 as a request makes it: gw's client (its own connection, on core 1
  // as the gateways are) sending the request path's first script, the credit hold with its rate
  // take, one after another: the unit the c=1 growth is counted in.
  const client = execFileSync(
    "taskset",
    ["-c", "1", process.execPath, path.join(root, "scripts/bench-redis-client.mjs"), "--mode", "hold", "--socket", socket],
    {
      encoding: "utf8",
    },
  );
  const roundTripMs = Number(/hold c=1 p50 ([\d.]+) µs per call/.exec(client)?.[1]) / 1000;
  const growthMs = median(shared.p50.map((p50, index) => p50 - embedded.p50[index]));
  console.log(
    `one round trip at c=1 (the hold script from gw's client, p50): ${roundTripMs.toFixed(3)} ms; c=1 p50 grows ${growthMs.toFixed(3)} ms (median of paired differences) = ${(growthMs / roundTripMs).toFixed(2)} round trips`,
  );
  await twoInstances(gateways, socket, upstreamPort, children);
  const perRequest = Object.entries(commandsSent).map(([command, calls]) => `${command} ${(calls / counted.requests).toFixed(2)}`);
  console.log(`commands gw sent to redis per request at c=1 (${counted.requests} requests): ${perRequest.join(", ")}`);
} finally {
  for (const child of children.reverse()) child.kill("SIGINT");
  await new Promise((resolve) => setTimeout(resolve, 500));
  rmSync(work, { recursive: true, force: true });
}

/**
 * Two instances on one Redis, one per core (a deployment's N instances on N machines, squeezed
 * onto this one's two cores beside the load generators, the upstream and redis-server), each
 * given half the connections by a load generator of its own, against the embedded gateway and
 * the one Redis instance alone at the full concurrency, alternated.
 */
async function twoInstances(gateways, socket, upstreamPort, children) {
  Object.assign(process.env, { GW_BENCH_REDIS: socket, GW_BENCH_REDIS_PREFIX: "bench:" });
  const second = pinned(0, "bash", [path.join(root, "bench/start-gw.sh"), "18793", `http://127.0.0.1:${upstreamPort}/v1`]);
  children.push(second);
  await listening(second);
  delete process.env.GW_BENCH_REDIS;
  delete process.env.GW_BENCH_REDIS_PREFIX;
  const half = String(Math.max(1, Math.floor(Number(values.c) / 2)));
  const both = async () => {
    const results = await Promise.all(
      [18792, 18793].map((port) => harnessLoadAsync(harness, port, { mode: values.mode, concurrency: half, seconds: values.seconds })),
    );
    return results.reduce((sum, result) => sum + result.rps, 0);
  };
  await both(); // warm-up of the new instance
  const runs = { embedded: [], redis: [], two: [] };
  for (let round = 0; round < Math.max(2, Number(values.pairs) / 2); round++) {
    runs.embedded.push(load(gateways[0].port, values.c, values.seconds).rps);
    runs.two.push(await both());
    runs.redis.push(load(gateways[1].port, values.c, values.seconds).rps);
  }
  const shown = (list) => list.map((rps) => rps.toFixed(0)).join(" ");
  console.log(`two redis instances (cores 0 and 1, c=${half} each), rps together ${shown(runs.two)}`);
  console.log(`  beside one embedded instance ${shown(runs.embedded)} and one redis instance ${shown(runs.redis)} (c=${values.c}, core 1)`);
  console.log(
    `  median: two redis instances ${(median(runs.two) / median(runs.embedded)).toFixed(3)} of one embedded, ${(median(runs.two) / median(runs.redis)).toFixed(3)} of one redis`,
  );
}

function load(port, concurrency, seconds) {
  return harnessLoad(harness, port, { mode: values.mode, concurrency, seconds });
}
