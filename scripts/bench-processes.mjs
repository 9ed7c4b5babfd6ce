// What the A/B benchmarks (bench-ab.mjs, bench-redis.mjs, bench-responses.mjs) share: processes
// pinned to a core, waiting for `gw serve` to listen, a process's CPU time from /proc, a median,
// and one run of the shared harness's load generator against bench/start-gw.sh's gateway.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

/** A child on one core (taskset), its output kept for listening(); `env` adds to this process's environment. */
export function pinned(core, command, args, env = {}) {
  const child = spawn("taskset", ["-c", String(core), command, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  child.output = "";
  child.stdout.on("data", (chunk) => (child.output += chunk));
  child.stderr.on("data", (chunk) => (child.output += chunk));
  return child;
}

/** Resolves once `gw serve` says it listens; throws with its output after 30 s. */
export async function listening(child) {
  for (let waited = 0; waited < 30_000; waited += 100) {
    if (child.output.includes("listening on")) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gw serve did not start: ${child.output}`);
}

/** A process's peak resident memory so far (VmHWM), in MiB, one decimal. */
export function peakRssMiB(pid) {
  const kib = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return (kib / 1024).toFixed(1);
}

/** User + system CPU time of a process, in milliseconds. */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (100/s)
}

export function median(numbers) {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** One run of the harness's load generator (on core 0) against a gateway started by bench/start-gw.sh; its JSON result. */
export function harnessLoad(harness, port, options) {
  const output = execFileSync("node", harnessArgs(harness, port, options), { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return resultOf(output);
}

/** The same, not waiting: several load generators at once (one per gateway instance). */
export function harnessLoadAsync(harness, port, options) {
  return new Promise((resolve, reject) => {
    const child = spawn("node", harnessArgs(harness, port, options), { stdio: ["ignore", "pipe", "ignore"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(resultOf(output)) : reject(new Error(`the load generator exited ${code}`))));
  });
}

function harnessArgs(harness, port, { mode, concurrency, seconds }) {
  return [
    path.join(harness, "bench.mjs"),
    "--base",
    `http://127.0.0.1:${port}/v1`,
    "--model",
    "bench/fake-model",
    "-H",
    "authorization: Bearer gw_benchbenchbenchbenchbenchbenchbenchbenchbenchbe",
    "--mode",
    mode,
    "-c",
    String(concurrency),
    "-d",
    String(seconds),
    "--loadgen-cpus",
    "0",
    "--json",
    "--no-probe",
  ];
}

function resultOf(output) {
  return JSON.parse(output.trim().split("\n").pop());
}
