#!/usr/bin/env node
// Storage memory benchmark (not a test): the resident memory of `gw serve`, and of the `gw`
// client, while a 50 MB file is uploaded (multipart, then presigned PUT) and downloaded through
// its signed link. Both sides stream, so RSS should stay flat: far below the file's size.
//
//   npm run build && node bench/storage-rss.mjs [--size-mb 50] [--rounds 3]
//
// RSS is sampled every 10 ms from /proc/<pid>/status (Linux; `ps` elsewhere). Results go to
// docs/benchmarks.md under "Storage" by hand.
import { execFile, spawn } from "node:child_process";
import { closeSync, ftruncateSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const gw = path.join(root, "bin", "run.js");
const { values } = parseArgs({ options: { "size-mb": { type: "string", default: "50" }, rounds: { type: "string", default: "3" } } });
const sizeBytes = Number(values["size-mb"]) * 1024 * 1024;
const rounds = Number(values.rounds);
const MB = 1024 * 1024;

const home = mkdtempSync(path.join(os.tmpdir(), "gw-storage-bench-"));
const work = mkdtempSync(path.join(os.tmpdir(), "gw-storage-bench-files-"));
const env = { ...process.env, GW_HOME: home };
delete env.NODE_ENV;

await run(["init"]);
// Larger sizes than the 50 MB default limit are allowed here, to show that memory does not grow with the file.
const configFile = path.join(home, "config.json");
const config = JSON.parse(readFileSync(configFile, "utf8"));
config.storage = { ...config.storage, maxFileBytes: Math.max(50 * 1024 * 1024, sizeBytes) };
writeFileSync(configFile, JSON.stringify(config, null, 2));
const key = (await run(["keys", "create", "--agent", "bench", "--plan", "max"])).trim();
const server = spawn(process.execPath, [gw, "serve", "--port", "0"], { env, stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise((resolve, reject) => {
  createInterface({ input: server.stdout }).once("line", (line) => resolve(line.replace(/^listening on /, "")));
  server.once("exit", (code) => reject(new Error(`gw serve exited ${code}`)));
});
const clientEnv = { ...env, GW_BASE_URL: url, GW_API_KEY: key };

// A sparse file: the bytes the server receives are real, the disk space is not.
const file = path.join(work, "payload.bin");
const fd = openSync(file, "w");
ftruncateSync(fd, sizeBytes);
closeSync(fd);

try {
  // Warm up the code paths once with a small file, so the first measured round is not paying for JIT and lazy imports.
  const warm = path.join(work, "warm.bin");
  const warmFd = openSync(warm, "w");
  ftruncateSync(warmFd, 64 * 1024);
  closeSync(warmFd);
  const warmId = JSON.parse(await run(["storage", "upload", warm, "--json"], clientEnv)).data.id;
  await run(["storage", "get", warmId, "-o", path.join(work, "warm.out")], clientEnv);

  const rows = [];
  // What a gw client process takes for any call, for comparison with the transfer rows.
  rows.push({ round: "-", step: "client baseline (storage quota)", ...(await measured(["storage", "quota"])) });
  for (let round = 1; round <= rounds; round += 1) {
    const upload = await measured(["storage", "upload", file, "--json"]);
    const id = JSON.parse(upload.stdout).data.id;
    rows.push({ round, step: "upload (multipart)", ...upload });
    const presigned = await measured(["storage", "upload", file, "--presigned", "--json"]);
    rows.push({ round, step: "upload (presigned PUT)", ...presigned });
    const target = path.join(work, `download-${round}.bin`);
    rows.push({ round, step: "download (302 + signed GET)", ...(await measured(["storage", "get", id, "-o", target])) });
    rmSync(target, { force: true });
  }
  report(rows);
} finally {
  server.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}

/** Run a gw client command while sampling the server's and the client's RSS. */
async function measured(args) {
  const before = rssOf(server.pid);
  const started = performance.now();
  const child = spawn(process.execPath, [gw, ...args], { env: clientEnv, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  let serverPeak = before;
  let clientPeak = 0;
  const sampler = setInterval(() => {
    serverPeak = Math.max(serverPeak, rssOf(server.pid));
    clientPeak = Math.max(clientPeak, rssOf(child.pid));
  }, 10);
  const code = await new Promise((resolve) => child.once("exit", resolve));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`gw ${args.join(" ")} failed (${code}): ${stderr}`);
  return { stdout, seconds: (performance.now() - started) / 1000, serverBefore: before, serverPeak, clientPeak };
}

function rssOf(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function report(rows) {
  const mb = (bytes) => (bytes / MB).toFixed(1);
  console.log(`node ${process.version}, ${os.cpus().length} CPUs, file ${mb(sizeBytes)} MB, ${rounds} rounds`);
  console.log("");
  console.log("| round | step | time (s) | MB/s | server RSS before (MB) | server RSS peak (MB) | server growth (MB) | gw client RSS peak (MB) |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const row of rows) {
    const rate = row.round === "-" ? "-" : (sizeBytes / MB / row.seconds).toFixed(0);
    console.log(
      `| ${row.round} | ${row.step} | ${row.seconds.toFixed(2)} | ${rate} | ${mb(row.serverBefore)} | ${mb(row.serverPeak)} | ${mb(row.serverPeak - row.serverBefore)} | ${mb(row.clientPeak)} |`,
    );
  }
  const growth = Math.max(...rows.filter((row) => row.round !== "-").map((row) => row.serverPeak - row.serverBefore));
  console.log("");
  console.log(`largest server growth during a transfer: ${mb(growth)} MB for a ${mb(sizeBytes)} MB file (${((growth / sizeBytes) * 100).toFixed(1)}%)`);
}

function run(args, runEnv = env) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [gw, ...args], { env: runEnv, maxBuffer: 16 * MB }, (error, stdout, stderr) =>
      error ? reject(new Error(`${args.join(" ")}: ${stderr || error.message}`)) : resolve(stdout),
    );
  });
}
