// What /v1/responses costs over /v1/chat/completions on the same gw and upstream:
// `node scripts/bench-responses.mjs [--mode stream|nonstream] [-c 64] [--pairs 10] [--seconds 2] [--store]`.
//
// One gw (the working tree, `npm run build` first) on core 1, the shared harness's fake upstream
// and wrk on core 0. Short runs alternate between the two endpoints, the order reversed every
// pair; CPU per request is read from /proc. The same conversation is asked both ways: the chat
// body is the harness's, the Responses body says it with `instructions` and `input`. `--store`
// keeps each response (the API's default); without it the requests say `store: false`, which
// measures the conversion alone.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { cpuMs, listening, median, pinned } from "./bench-processes.mjs";

const root = path.resolve(import.meta.dirname, "..");
const harness = process.env.GW_BENCH_HARNESS ?? path.resolve(root, "../shared/bench");
const { values } = parseArgs({
  options: {
    mode: { type: "string", default: "nonstream" },
    c: { type: "string", short: "c", default: "64" },
    pairs: { type: "string", default: "10" },
    seconds: { type: "string", default: "2" },
    "warmup-pairs": { type: "string", default: "3" },
    store: { type: "boolean", default: false },
  },
});
if (!existsSync(path.join(harness, "fake-upstream.mjs"))) {
  console.error(`bench-responses: the load harness is not at ${harness} (set GW_BENCH_HARNESS)`);
  process.exit(1);
}
const stream = values.mode === "stream";
const key = "gw_benchbenchbenchbenchbenchbenchbenchbenchbenchbe";
const system = "You are a helpful assistant.";
const question = "Write two sentences about benchmarking AI gateways.";
const endpoints = [
  {
    name: "chat.completions",
    path: "/v1/chat/completions",
    body: {
      model: "bench/fake-model",
      messages: [
        { role: "system", content: system },
        { role: "user", content: question },
      ],
      max_tokens: 128,
      temperature: 0,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    },
  },
  {
    name: "responses",
    path: "/v1/responses",
    body: {
      model: "bench/fake-model",
      instructions: system,
      input: question,
      max_output_tokens: 128,
      temperature: 0,
      ...(values.store ? {} : { store: false }),
      ...(stream ? { stream: true } : {}),
    },
  },
];

const work = mkdtempSync(path.join(tmpdir(), "gw-bench-responses-"));
const children = [];
try {
  const upstreamPort = 18790;
  const gatewayPort = 18791;
  children.push(pinned(0, "node", [path.join(harness, "fake-upstream.mjs"), String(upstreamPort)]));
  const gateway = pinned(1, "bash", [path.join(root, "bench/start-gw.sh"), String(gatewayPort), `http://127.0.0.1:${upstreamPort}/v1`]);
  children.push(gateway);
  await listening(gateway);
  for (const endpoint of endpoints) {
    endpoint.script = path.join(work, `${endpoint.name}.lua`);
    writeFileSync(endpoint.script, wrkScript(JSON.stringify(endpoint.body)));
    endpoint.url = `http://127.0.0.1:${gatewayPort}${endpoint.path}`;
    endpoint.runs = [];
    load(endpoint, 6);
  }
  const total = Number(values.pairs) + Number(values["warmup-pairs"]);
  for (let pair = 0; pair < total; pair++) {
    const order = pair % 2 === 0 ? endpoints : [...endpoints].reverse();
    for (const endpoint of order) {
      const before = cpuMs(gateway.pid);
      const result = load(endpoint, Number(values.seconds));
      if (result.non2xx > 0) throw new Error(`${endpoint.name}: ${result.non2xx} answers were not 2xx`);
      const cpuPerRequest = ((cpuMs(gateway.pid) - before) * 1000) / result.requests;
      if (pair >= Number(values["warmup-pairs"])) endpoint.runs.push({ rps: result.rps, cpuPerRequest });
    }
  }
  console.log(
    `mode=${values.mode} c=${values.c} ${values.seconds}s runs, ${values.pairs} pairs (order alternated), responses ${values.store ? "stored" : "store: false"}`,
  );
  for (const endpoint of endpoints) {
    console.log(`${endpoint.name.padEnd(18)} rps ${endpoint.runs.map((run) => run.rps.toFixed(0)).join(" ")}`);
    console.log(`${"".padEnd(18)} cpu µs/request ${endpoint.runs.map((run) => run.cpuPerRequest.toFixed(0)).join(" ")}`);
  }
  const [chat, responses] = endpoints;
  const ratio = (pick) => median(responses.runs.map((run, index) => pick(run) / pick(chat.runs[index])));
  console.log(
    `median of paired ratios, responses / chat: rps ${ratio((run) => run.rps).toFixed(3)}, cpu per request ${ratio((run) => run.cpuPerRequest).toFixed(3)}`,
  );
} finally {
  for (const child of children.reverse()) child.kill("SIGINT");
  rmSync(work, { recursive: true, force: true });
}

function wrkScript(body) {
  return [
    'wrk.method = "POST"',
    `wrk.body = [==[${body}]==]`,
    'wrk.headers["Content-Type"] = "application/json"',
    `wrk.headers["Authorization"] = "Bearer ${key}"`,
    'done = function(summary) io.write(string.format("WRKJSON {\\"requests\\":%d,\\"duration_us\\":%d,\\"non2xx\\":%d}\\n", summary.requests, summary.duration, summary.errors.status)) end',
  ].join("\n");
}

function load(endpoint, seconds) {
  const output = execFileSync("taskset", ["-c", "0", "wrk", "-t", "1", "-c", values.c, "-d", `${seconds}s`, "-s", endpoint.script, endpoint.url], {
    encoding: "utf8",
  });
  const result = JSON.parse(/WRKJSON (\{.*\})/.exec(output)[1]);
  return { requests: result.requests, rps: result.requests / (result.duration_us / 1e6), non2xx: result.non2xx };
}
