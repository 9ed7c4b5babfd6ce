// `gw serve` start-up: time to its first line (`listening on …`) and to /ready answering 200, and
// its resident memory once ready, on a fresh home (the embedded defaults), beside two floors in
// the same run: a bare node:http server, and node with only the libraries a gw server must load
// (h3, undici, zod, pino). Median of --runs (5) runs, alternated. Part of `npm run bench`.
//
//   node scripts/bench-start.mjs [--runs 5] [--node-flags "--max-semi-space-size=4"]
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { median } from "./bench-processes.mjs";

const root = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { runs: { type: "string", default: "5" }, "node-flags": { type: "string", default: "" } } });
const nodeFlags = values["node-flags"].split(" ").filter(Boolean);
/** After ready, this long idle before RSS is read: what an operator sees right after a start. */
const SETTLE_MS = 1000;

const bareServer = `require("node:http").createServer((q, s) => s.end("ok")).listen(0, "127.0.0.1", function () { console.log("listening on http://127.0.0.1:" + this.address().port) })`;
const libraries = `Promise.all(["h3", "undici", "zod", "pino"].map((name) => import(name))).then(() => require("node:http").createServer((q, s) => s.end("ok")).listen(0, "127.0.0.1", function () { console.log("listening on http://127.0.0.1:" + this.address().port) }))`;

const targets = [
  {
    name: "gw serve (fresh home)",
    start: (home) => [...nodeFlags, path.join(root, "bin/run.js"), "serve", "--home", home, "--host", "127.0.0.1", "--port", "0"],
    ready: "/ready",
  },
  { name: "node:http, nothing else", start: () => ["-e", bareServer], ready: "/" },
  { name: "node + h3, undici, zod, pino", start: () => ["-e", libraries], ready: "/" },
];

const results = new Map(targets.map((target) => [target.name, { firstLine: [], ready: [], rss: [] }]));
for (let run = 0; run < Number(values.runs); run++) {
  for (const target of run % 2 === 0 ? targets : [...targets].reverse()) {
    const home = mkdtempSync(path.join(tmpdir(), "gw-bench-start-"));
    execFileSync("node", [path.join(root, "bin/run.js"), "init", "--home", home], { stdio: "ignore" });
    try {
      const figures = await startOnce(target.start(home), target.ready);
      const kept = results.get(target.name);
      kept.firstLine.push(figures.firstLine);
      kept.ready.push(figures.ready);
      kept.rss.push(figures.rss);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }
}

console.log(
  `start-up, median of ${values.runs} runs${nodeFlags.length ? ` (gw with ${nodeFlags.join(" ")})` : ""}; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
);
console.log(`${"".padEnd(32)} ${"first line".padStart(12)} ${"ready".padStart(10)} ${"RSS ready+1s".padStart(14)}`);
for (const [name, kept] of results) {
  console.log(
    `${name.padEnd(32)} ${`${median(kept.firstLine).toFixed(0)} ms`.padStart(12)} ${`${median(kept.ready).toFixed(0)} ms`.padStart(10)} ${`${median(kept.rss).toFixed(1)} MiB`.padStart(14)}`,
  );
}

/** Start a process, time its first stdout line and its first 200 on `readyPath`, read VmRSS once settled, stop it. */
async function startOnce(args, readyPath) {
  const began = performance.now();
  // From the project root: `-e` resolves the libraries from its node_modules.
  const child = spawn("node", args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const firstLine = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no first line after 30 s: ${output}`)), 30_000);
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (output.includes("\n")) {
        clearTimeout(timer);
        resolve(performance.now() - began);
      }
    });
    child.stderr.on("data", (chunk) => (output += chunk));
  });
  const url = /listening on (\S+)/.exec(output)?.[1];
  if (!url) throw new Error(`no address in: ${output}`);
  let ready;
  for (let waited = 0; ready === undefined; waited += 10) {
    if (waited > 30_000) throw new Error(`${readyPath} never answered 200`);
    const answered = await fetch(`${url}${readyPath}`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (answered) ready = performance.now() - began;
    else await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1]) / 1024;
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  return { firstLine, ready, rss };
}
