// What a response-cache hit saves: `node scripts/bench-cache.mjs [--delay-ms 50] [--requests 500]`.
//
// One gw (the working tree, `npm run build` first) on core 1, the shared harness's fake upstream
// on core 0 answering after a fixed delay (FAKE_DELAY_MS, the upstream's own latency), and
// requests one at a time from this process (core 0). The same request is timed three ways:
// without the cache (every request goes to the upstream), and asking for the cache with
// `x-gw-cache` (the first one misses, every later one is a hit), non-stream and stream. The
// figure that matters is the upstream's delay over the hit's median latency: at least 5.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import { listening, median, pinned } from "./bench-processes.mjs";

const root = path.resolve(import.meta.dirname, "..");
const harness = process.env.GW_BENCH_HARNESS ?? path.resolve(root, "../shared/bench");
const { values } = parseArgs({ options: { "delay-ms": { type: "string", default: "50" }, requests: { type: "string", default: "500" } } });
if (!existsSync(path.join(harness, "fake-upstream.mjs"))) {
  console.error(`bench-cache: the load harness is not at ${harness} (set GW_BENCH_HARNESS)`);
  process.exit(1);
}
const delayMs = Number(values["delay-ms"]);
const key = "gw_benchbenchbenchbenchbenchbenchbenchbenchbenchbe";
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

const children = [];
try {
  const upstreamPort = 18795;
  const gatewayPort = 18796;
  const upstream = spawn("taskset", ["-c", "0", "node", path.join(harness, "fake-upstream.mjs"), String(upstreamPort)], {
    stdio: "ignore",
    env: { ...process.env, FAKE_DELAY_MS: String(delayMs) },
  });
  children.push(upstream);
  const gateway = pinned(1, "bash", [path.join(root, "bench/start-gw.sh"), String(gatewayPort), `http://127.0.0.1:${upstreamPort}/v1`]);
  children.push(gateway);
  await listening(gateway);
  const url = `http://127.0.0.1:${gatewayPort}/v1/chat/completions`;
  const count = Number(values.requests);
  console.log(`upstream delay ${delayMs} ms, ${count} requests one at a time per row; latency from request to the answer's last byte`);
  console.log("row                       p50 ms   p90 ms   upstream delay / p50");
  for (const stream of [false, true]) {
    const body = (run) =>
      JSON.stringify({
        model: "bench/fake-model",
        temperature: 0,
        max_tokens: 128,
        messages: [{ role: "user", content: `Write two sentences about benchmarking AI gateways (${run}).` }],
        ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      });
    const mode = stream ? "stream" : "nonstream";
    // Without the cache every request waits for the upstream: fewer suffice.
    const uncached = await timed(url, body("uncached"), {}, Math.min(count, 50));
    const asked = { "x-gw-cache": "1h" };
    const first = await timed(url, body("cached"), asked, 1);
    if (first.cache[0] !== "miss") throw new Error(`the first cached request said x-gw-cache: ${first.cache[0]}`);
    const hits = await timed(url, body("cached"), asked, count);
    if (hits.cache.some((value) => value !== "hit")) throw new Error("a repeated request was not a cache hit");
    report(`${mode} without cache`, uncached.latencies);
    report(`${mode} cache hit`, hits.latencies);
  }
} finally {
  for (const child of children.reverse()) child.kill("SIGINT");
  agent.destroy();
}

function report(row, latencies) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const p50 = median(sorted);
  const p90 = sorted[Math.floor(sorted.length * 0.9)];
  console.log(`${row.padEnd(24)} ${p50.toFixed(2).padStart(7)}  ${p90.toFixed(2).padStart(7)}   ${(delayMs / p50).toFixed(1)}x`);
}

async function timed(url, body, headers, count) {
  const latencies = [];
  const cache = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    const answer = await post(url, body, headers);
    latencies.push(performance.now() - started);
    cache.push(answer.cache);
    if (answer.status !== 200) throw new Error(`answered ${answer.status}: ${answer.text}`);
  }
  return { latencies, cache };
}

function post(url, body, headers) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers } },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode, cache: response.headers["x-gw-cache"], text }));
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}
