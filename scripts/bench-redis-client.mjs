// What one Redis command costs gw's client, three ways: `node scripts/bench-redis-client.mjs [--runs 3]`.
//
// Starts a redis-server (Debian's; no persistence, a unix socket, core 0) and, on core 1, sends one
// small Lua script per call through ioredis with enableAutoPipelining, through plain ioredis, and
// through gw's own connection (src/store/redis-connection.ts openRedis, which corks the socket for
// a turn of the event loop). For each: the round trip at c=1 (one call after another) and the
// client's CPU per call at c=64 (64 callers, each call from a timer of its own, as requests
// arrive). Run `npm run build` first. docs/benchmarks.md, "The state on Redis", has figures.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { pinned } from "./bench-processes.mjs";

const root = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { runs: { type: "string", default: "3" }, mode: { type: "string" }, socket: { type: "string" } } });

if (values.mode) {
  await measure(values.mode, values.socket);
  process.exit(0);
}

const work = mkdtempSync(path.join(tmpdir(), "gw-bench-redis-client-"));
const socket = path.join(work, "redis.sock");
const redis = pinned(0, "redis-server", ["--port", "0", "--unixsocket", socket, "--dir", work, "--save", "", "--appendonly", "no"]);
try {
  for (let waited = 0; !existsSync(socket); waited += 50) {
    if (waited > 30_000) throw new Error(`redis-server did not start: ${redis.output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (let run = 0; run < Number(values.runs); run++)
    for (const mode of ["auto-pipelining", "plain", "gw"]) {
      // One process per measurement, on core 1: nothing of one mode's warm-up helps the next.
      const child = spawnSync("taskset", ["-c", "1", process.execPath, import.meta.filename, "--mode", mode, "--socket", socket], { encoding: "utf8" });
      process.stdout.write(child.stdout || child.stderr);
    }
} finally {
  redis.kill("SIGINT");
  await new Promise((resolve) => redis.once("close", resolve));
  rmSync(work, { recursive: true, force: true });
}

async function measure(mode, socket) {
  if (mode === "hold") return measureHold(socket);
  const { Redis } = await import("ioredis");
  const { openRedis } = await import(path.join(root, "dist/src/store/redis-connection.js"));
  const client =
    mode === "gw"
      ? await openRedis({ url: socket, commandTimeoutMs: 2000 })
      : new Redis(socket, { enableAutoPipelining: mode === "auto-pipelining", commandTimeout: 2000 });
  client.defineCommand("benchScript", { numberOfKeys: 2, lua: "return {1, ARGV[1], ARGV[2]}" });
  await client.ping();
  const call = (index) => client.benchScript("a{1}", "b{1}", "123", "456", "789", "abcdef", index);
  const sequential = async (calls) => {
    const started = process.hrtime.bigint();
    for (let index = 0; index < calls; index++) await call(index);
    return Number(process.hrtime.bigint() - started) / calls / 1000;
  };
  await sequential(2000);
  const roundTripUs = await sequential(5000);
  const cpuBefore = process.cpuUsage();
  let calls = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let index = 0; index < 1000; index++) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        await call(index);
        calls++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  console.log(`${mode.padEnd(16)} c=1 ${roundTripUs.toFixed(1)} µs per call; c=64 ${((cpu.user + cpu.system) / calls).toFixed(1)} µs CPU per call`);
  client.disconnect();
}

/**
 * `--mode hold`: the round trip of the request path's own first script at c=1, the credit hold
 * with its rate take (RedisCreditStore.hold), each hold followed by its settle, which is not
 * timed. scripts/bench-redis.mjs counts a request's latency on Redis in these.
 */
async function measureHold(socket) {
  const { openRedis } = await import(path.join(root, "dist/src/store/redis-connection.js"));
  const { RedisCreditStore } = await import(path.join(root, "dist/src/store/redis-credit-store.js"));
  const client = await openRedis({ url: socket, commandTimeoutMs: 2000 });
  const credits = new RedisCreditStore(client, { prefix: `bench-hold${process.pid}:` });
  const account = { agentId: "agent-bench", allowance: 1e12 };
  const take = { key: "gw_bench", requestsPerMinute: 1e8 };
  const period = new Date().toISOString().slice(0, 7);
  const holdAndSettle = async (index) => {
    const started = process.hrtime.bigint();
    const { held } = await credits.hold(account, 10, 1, period, take);
    const took = process.hrtime.bigint() - started;
    const row = {
      id: `row-${process.pid}-${index}`,
      time: new Date().toISOString(),
      agent: account.agentId,
      keyPrefix: "gw_bench",
      endpoint: "chat",
      model: "m",
      provider: "p",
      units: { input: 1 },
      credits: 1,
      requestId: `r${index}`,
    };
    await credits.settle(held, row);
    return took;
  };
  for (let index = 0; index < 1000; index++) await holdAndSettle(index);
  const took = [];
  for (let index = 1000; index < 4000; index++) took.push(Number(await holdAndSettle(index)) / 1000);
  took.sort((a, b) => a - b);
  console.log(`hold c=1 p50 ${took[took.length >> 1].toFixed(1)} µs per call`);
  credits.close();
  client.disconnect();
}
