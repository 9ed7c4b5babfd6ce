#!/usr/bin/env node
// Memory under bad input (not a test): the resident memory and V8 heap of `gw serve` while it
// answers rounds of mixed bad requests (no key, a bad key, bad JSON, unknown models with unique
// names, validation errors, unknown paths, 402, 403, 413, 429, a refused upstream, malformed HTTP,
// oversized headers, MCP, `__proto__` as a parameter ...), then while it idles. Nothing a bad
// request leaves behind should stay: the heap used after a collection returns to where it was,
// and RSS comes back once V8 shrinks its heap.
//
//   npm run build && node bench/bad-input-rss.mjs [--requests 20000] [--rounds 3] [--concurrency 12] [--idle-seconds 120]
//                                                 [--node-flags=--optimize-for-size]
//
// RSS is read from /proc/<pid>/status (Linux), the heap from the server's own GET /metrics.
// Results go to docs/benchmarks.md under "Memory under bad input" by hand.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const gw = path.join(root, "bin", "run.js");
const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "20000" },
    rounds: { type: "string", default: "3" },
    concurrency: { type: "string", default: "12" },
    "idle-seconds": { type: "string", default: "120" },
    // V8 flags for the server, for example "--optimize-for-size" (see docs/benchmarks.md).
    "node-flags": { type: "string", default: "" },
  },
});

// An OpenAI-compatible upstream answering every chat completion with a short one.
const upstream = http.createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    response.setHeader("content-type", "application/json");
    response.end(
      JSON.stringify({
        id: "chatcmpl-bench",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      }),
    );
  });
});
await new Promise((resolve) => upstream.listen(0, "127.0.0.1", resolve));
const refused = net.createServer();
await new Promise((resolve) => refused.listen(0, "127.0.0.1", resolve));
const refusedPort = refused.address().port;
await new Promise((resolve) => refused.close(resolve)); // nothing listens there now: connection refused

const home = mkdtempSync(path.join(os.tmpdir(), "gw-bad-input-bench-"));
const env = { ...process.env, GW_HOME: home };
delete env.NODE_ENV;
const gwRun = (args) => execFileSync(process.execPath, [gw, ...args], { env, encoding: "utf8" });
gwRun(["init"]);
const configFile = path.join(home, "config.json");
const config = JSON.parse(readFileSync(configFile, "utf8"));
config.providers = {
  up: { type: "openai", baseUrl: `http://127.0.0.1:${upstream.address().port}/v1`, apiKey: "sk-bench" },
  gone: { type: "openai", baseUrl: `http://127.0.0.1:${refusedPort}/v1`, apiKey: "sk-bench" },
  local: { type: "local" },
};
config.routes = [
  { prefix: "up/", provider: "up", priority: 1 },
  { prefix: "gone/", provider: "gone", priority: 1 },
];
config.models = [];
config.upstream = { retries: 0 };
config.plans = { ...config.plans, load: { requestsPerMinute: 1_000_000, monthlyCredits: 1_000_000_000_000, freeTierOnly: false } };
writeFileSync(configFile, JSON.stringify(config, null, 2));
const keyFor = (agent, ...flags) => JSON.parse(gwRun(["keys", "create", "--agent", agent, "--plan", "load", "--json", ...flags])).key;
const key = keyFor("bench");
const poorKey = keyFor("bench-poor", "--budget", "1");
const slowKey = keyFor("bench-rpm", "--rpm", "1");

const server = spawn(process.execPath, [...values["node-flags"].split(" ").filter(Boolean), gw, "serve", "--port", "0", "--log-level", "error"], {
  env,
  stdio: ["ignore", "pipe", "inherit"],
});
const url = new URL(
  await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once("line", (line) => resolve(line.replace(/^listening on /, "")));
    server.once("exit", (code) => reject(new Error(`gw serve exited ${code}`)));
  }),
);
const port = Number(url.port);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(values.concurrency) });

function send({ method = "POST", path: requestPath, headers = {}, body, declaredLength }) {
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path: requestPath,
        agent,
        headers: {
          ...(body !== undefined || declaredLength ? { "content-type": "application/json" } : {}),
          ...headers,
          ...(declaredLength ? { "content-length": declaredLength } : {}),
        },
      },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode));
        response.on("error", () => resolve("error"));
      },
    );
    request.on("error", () => resolve("error"));
    if (declaredLength) {
      // Declares far more than it sends: the refusal comes on the headers alone.
      request.write("x".repeat(100));
      request.on("response", () => request.destroy());
    } else request.end(body);
  });
}

function raw(text) {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(text));
    let answer = "";
    socket.on("data", (chunk) => (answer += chunk));
    socket.on("close", () => resolve(/^HTTP\/1\.1 (\d+)/.exec(answer)?.[1] ?? "closed"));
    socket.on("error", () => resolve("error"));
  });
}

const chat = (model, extra = {}) => JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 5, ...extra });
const bearer = (value) => ({ authorization: `Bearer ${value}` });
let unique = 0;
const kinds = [
  () => send({ path: "/v1/chat/completions", body: chat("up/x") }),
  () => send({ path: "/v1/chat/completions", headers: bearer(`gw_bogus${unique++}`), body: chat("up/x") }),
  () => send({ path: "/v1/chat/completions", headers: bearer(key), body: '{"model":' }),
  () => send({ path: "/v1/chat/completions", headers: bearer(key), body: chat(`nope-${unique++}`) }),
  () => send({ path: "/v1/chat/completions", headers: bearer(key), body: chat(`up/unique-${unique++}`) }),
  () => send({ path: "/v1/chat/completions", headers: bearer(key), body: chat("up/x", { max_tokens: 0 }) }),
  () => send({ method: "GET", path: `/v1/unknown/${unique++}` }),
  () => send({ path: "/v1/embeddings", headers: bearer(key), body: JSON.stringify({ model: `zz-${unique++}`, input: "x" }) }),
  () => send({ path: "/anthropic/v1/messages", headers: { "x-api-key": key }, body: JSON.stringify({ model: "up/x", messages: [] }) }),
  () =>
    send({
      path: "/mcp",
      headers: { ...bearer(key), accept: "application/json, text/event-stream" },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}',
    }),
  () => send({ path: "/v1/chat/completions", headers: bearer(poorKey), body: chat("up/x", { max_tokens: 1000 }) }),
  () => send({ path: "/v1/images/generations", headers: bearer(key), body: JSON.stringify({ prompt: "x", size: "7x7" }) }),
  () => send({ path: "/v1/video/generations", headers: bearer(key), body: JSON.stringify({ prompt: "x", ratio: "__proto__" }) }),
  () => send({ path: "/v1/chat/completions", headers: bearer(key), declaredLength: "30000000" }),
  () => send({ method: "GET", path: `/v1/storage/blobs/file_x?expires=1&signature=${unique++}` }),
  () => raw("GARBAGE / NOPE\r\n\r\n"),
  () => raw(`GET /v1/models HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20000)}\r\n\r\n`),
  () => send({ method: "GET", path: "/v1/models", headers: bearer(slowKey) }),
  () => send({ path: "/v1/chat/completions", headers: bearer(key), body: chat("gone/x") }),
  () => send({ path: "/v1/chat/completions", headers: bearer(key), body: JSON.stringify({ model: "up/x", messages: [{ role: "tool", content: 5 }] }) }),
];

const MB = 1024 * 1024;
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))[1]) / 1024;
async function heap() {
  const text = await (await fetch(`${url.origin}/metrics`)).text();
  const gauge = (name) => Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1] ?? Number.NaN) / MB;
  return { used: gauge("nodejs_heap_size_used_bytes"), total: gauge("nodejs_heap_size_total_bytes") };
}
async function round(count) {
  let next = 0;
  const statuses = {};
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Number(values.concurrency) }, async () => {
      while (next < count) {
        const status = await kinds[next++ % kinds.length]();
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, statuses };
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const rows = [];
const sample = async (point, extra = "") => {
  const { used, total } = await heap();
  rows.push(`| ${point} | ${rss().toFixed(0)} | ${used.toFixed(0)} | ${total.toFixed(0)} | ${extra} |`);
};

try {
  await sleep(2000);
  await sample("idle start");
  for (let index = 1; index <= Number(values.rounds); index += 1) {
    const { seconds, statuses } = await round(Number(values.requests));
    await sample(`after round ${index}`, `${seconds.toFixed(1)} s; ${JSON.stringify(statuses)}`);
  }
  agent.destroy();
  for (let waited = 30; waited <= Number(values["idle-seconds"]); waited += 30) {
    await sleep(30_000);
    await sample(`idle ${waited} s`);
  }
  console.log(
    `Node ${process.version}${values["node-flags"] ? ` ${values["node-flags"]}` : ""}, ${values.requests} requests a round at concurrency ${values.concurrency}\n`,
  );
  console.log("| point | RSS (MB) | heap used (MB) | heap total (MB) | round |");
  console.log("|---|---|---|---|---|");
  for (const row of rows) console.log(row);
} finally {
  server.kill("SIGTERM");
  upstream.close();
}
