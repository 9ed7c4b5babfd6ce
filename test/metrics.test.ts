// GET /metrics in the Prometheus text format, read with a parser from npm: the counters move by
// what real calls did (a chat call, a failing upstream that opens its circuit, a storage upload, a
// held stream), labels are endpoint templates and never a key, a prompt, an agent or a raw path;
// loopback reads without a key, anyone else only with server.metricsToken. GET /ready is 200
// with its checks, or 503 naming the failing ones.
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import test from "ava";
import parsePrometheusTextFormat, { type PrometheusFamily, type PrometheusSample } from "parse-prometheus-text-format";
import sharp from "sharp";
import { DEFAULT_VIDEO_MODEL_INPUTS } from "../src/config/default-video-models.js";
import { homePaths } from "../src/config/paths.js";
import { isLoopbackAddress, metricsAccess } from "../src/server/metrics-access.js";
import { startServer } from "../src/server/start-server.js";
import { storageApi } from "./_storage.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const PROMPT = "a prompt that must never become a label";
const AGENT = "metrics-agent-free-text";
const TOKEN = "metrics-token-0123456789abcdef";

let fake: FakeOpenAI;
let deadPort: number;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  fake = await startFakeOpenAI();
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  deadPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const home = await makeHome((config) => {
    config.upstream = { retries: 1, retryBaseDelayMs: 1, breakerFailureThreshold: 2 };
    config.providers = {
      up: { type: "openai", baseUrl: fake.url, apiKey: "sk-up" },
      dead: { type: "openai", baseUrl: `http://127.0.0.1:${deadPort}/v1`, apiKey: "sk-dead" },
    };
    config.routes = [
      { prefix: "m/", provider: "up", priority: 1 },
      { prefix: "dead/", provider: "dead", priority: 1 },
    ];
    config.models = [{ id: "m/x", name: "X", context_length: 8000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }];
  });
  // A clock that never moves: an open circuit stays open for the whole test.
  gateway = await startTestGateway(home, { clock: () => 0 });
  key = await addKey(home, AGENT, "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
});

async function scrapeText(url: string, init?: RequestInit): Promise<string> {
  const response = await fetch(`${url}/metrics`, init);
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}: ${await response.text()}`);
  return response.text();
}

/**
 * The parser folds the series of a labelled histogram into one (it keeps labels of unlabelled
 * histograms only), so histograms are read as what they are on the wire: `_bucket`, `_sum` and
 * `_count` series with their labels. The last test checks that they are declared histograms.
 */
async function scrape(url = gateway.url): Promise<PrometheusFamily[]> {
  return parsePrometheusTextFormat(asPlainSeries(await scrapeText(url)));
}

function asPlainSeries(text: string): string {
  return text.replace(/^# TYPE (\S+) histogram$/gm, "# TYPE $1 untyped");
}

/** The one series of `name` whose labels include `labels`, or undefined. */
function series(families: PrometheusFamily[], name: string, labels: Record<string, string> = {}): PrometheusSample | undefined {
  // A histogram read as plain series comes as one family per label set: look in all of them.
  const samples = families.filter((candidate) => candidate.name === name).flatMap((family) => family.metrics);
  const matches = samples.filter((sample) => Object.entries(labels).every(([label, value]) => sample.labels?.[label] === value));
  if (matches.length > 1) throw new Error(`${matches.length} series of ${name} match ${JSON.stringify(labels)}`);
  return matches[0];
}

/** A series' value, 0 when it does not exist yet. */
function value(families: PrometheusFamily[], name: string, labels: Record<string, string> = {}): number {
  return Number(series(families, name, labels)?.value ?? 0);
}

function labelValues(families: PrometheusFamily[]): string[] {
  return families.flatMap((family) => family.metrics.flatMap((sample) => Object.values(sample.labels ?? {})));
}

function chat(model: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 10, messages: [{ role: "user", content: PROMPT }], ...extra }),
  });
}

test.serial("a chat call with one failed attempt: requests, latency, attempts, the failure's cause, tokens and credits by model and plan", async (t) => {
  const before = await scrape();
  fake.enqueue({ status: 500 }, { usage: { prompt_tokens: 7, completion_tokens: 3 } });
  const response = await chat("m/x");
  t.is(response.status, 200);
  await response.json();
  const after = await scrape();
  const moved = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);

  const route = { method: "POST", route: "/v1/chat/completions" };
  t.is(moved("gw_http_requests_total", { ...route, status: "200" }), 1);
  t.is(moved("gw_http_request_duration_seconds_count", route), 1);
  t.is(value(after, "gw_http_request_duration_seconds_bucket", { ...route, le: "+Inf" }), value(after, "gw_http_request_duration_seconds_count", route));
  t.true(value(after, "gw_http_request_duration_seconds_sum", route) > 0);
  t.is(moved("gw_upstream_attempts_total", { provider: "up" }), 2);
  t.is(moved("gw_upstream_attempt_duration_seconds_count", { provider: "up", outcome: "failed" }), 1);
  t.is(moved("gw_upstream_attempt_duration_seconds_count", { provider: "up", outcome: "ok" }), 1);
  t.is(moved("gw_upstream_failures_total", { provider: "up", cause: "http_5xx" }), 1);
  t.is(moved("gw_tokens_total", { model: "m/x", plan: "pro", type: "prompt" }), 7);
  t.is(moved("gw_tokens_total", { model: "m/x", plan: "pro", type: "completion" }), 3);
  t.is(moved("gw_credits_total", { model: "m/x", plan: "pro" }), 10);
  t.is(moved("gw_usage_log_write_duration_seconds_count"), 1, "the call's usage row was written in one group write");
  t.is(value(after, "gw_upstream_circuit_state", { provider: "up", state: "closed" }), 1, "one failure in a row does not open it");

  const labels = labelValues(after).join("\n");
  for (const secret of [key, key.slice(0, 11), PROMPT, AGENT]) t.false(labels.includes(secret), `no label holds ${secret.slice(0, 11)}...`);
});

test.serial("an upstream that refuses connections: failures by cause, then its circuit opens and requests skip it", async (t) => {
  const before = await scrape();
  const first = await chat("dead/x");
  t.is(first.status, 502);
  await first.text();
  const opened = await scrape();
  const moved = (name: string, labels: Record<string, string>) => value(opened, name, labels) - value(before, name, labels);
  t.is(moved("gw_upstream_attempts_total", { provider: "dead" }), 2);
  t.is(moved("gw_upstream_failures_total", { provider: "dead", cause: "connect" }), 2);
  t.is(moved("gw_http_requests_total", { method: "POST", route: "/v1/chat/completions", status: "502" }), 1);
  t.is(value(opened, "gw_upstream_circuit_state", { provider: "dead", state: "open" }), 1);
  t.is(value(opened, "gw_upstream_circuit_state", { provider: "dead", state: "closed" }), 0);

  const second = await chat("dead/x");
  t.is(second.status, 503);
  t.is(((await second.json()) as { error: { code: string } }).error.code, "upstream_circuit_open");
  const skipped = await scrape();
  t.is(value(skipped, "gw_upstream_attempts_total", { provider: "dead" }), value(opened, "gw_upstream_attempts_total", { provider: "dead" }), "no attempt");
  t.is(value(skipped, "gw_http_requests_total", { method: "POST", route: "/v1/chat/completions", status: "503" }), 1);
});

test.serial("a storage upload: files and bytes; endpoints are labelled by their template, unknown paths as one value", async (t) => {
  const before = await scrape();
  const api = storageApi(gateway, key);
  const uploaded = await api.upload("metrics.txt", "12345", "text/plain");
  t.is(uploaded.status, 201);
  const id = uploaded.body.data.id as string;
  t.is((await api.call(`/v1/storage/files/${id}`)).status, 302);
  for (const path of ["/no/such/thing-1?token=abc", "/v1/nothing-here-2"]) t.is((await fetch(`${gateway.url}${path}`)).status, 404);
  const after = await scrape();
  const moved = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
  t.is(moved("gw_storage_files"), 1);
  t.is(moved("gw_storage_bytes"), 5);
  t.is(moved("gw_http_requests_total", { method: "POST", route: "/v1/storage/upload", status: "201" }), 1);
  t.is(moved("gw_http_requests_total", { method: "GET", route: "/v1/storage/files/:id", status: "302" }), 1);
  t.is(moved("gw_http_requests_total", { method: "GET", route: "unmatched", status: "404" }), 2);
  const labels = labelValues(after).join("\n");
  for (const raw of [id, "thing-1", "nothing-here", "token="]) t.false(labels.includes(raw), `no label holds ${raw}`);
});

test.serial("a stream in flight is counted as in flight and open until it ends", async (t) => {
  fake.enqueue({ holdAfterEvents: 2 });
  const safety = setTimeout(() => fake.releaseHeld(), 10_000);
  try {
    const response = await chat("m/x", { stream: true });
    const reader = response.body!.getReader();
    await reader.read(); // the first frames: the stream's headers and body have begun
    const during = await scrape();
    t.is(value(during, "gw_http_open_streams"), 1);
    t.is(value(during, "gw_http_requests_in_flight"), 2, "the stream and this scrape");
    fake.releaseHeld();
    while (!(await reader.read()).done) {}
    // The response's close event comes right after its last byte; a scrape is its own request.
    const after = await eventually(scrape, { until: (scraped) => value(scraped, "gw_http_open_streams") === 0, what: "the stream to close" });
    t.is(value(after, "gw_http_open_streams"), 0);
    t.is(value(after, "gw_http_requests_in_flight"), 1, "only this scrape");
  } finally {
    clearTimeout(safety);
  }
});

test("video jobs are counted by state: one queued, then cancelled", async (t) => {
  const kenburns = DEFAULT_VIDEO_MODEL_INPUTS.find((model) => model.id === "local/kenburns")!;
  const home = await makeHome((config) => {
    config.providers = { local: { type: "local" } };
    config.catalog = { video: [kenburns] };
    config.tools.video = { default: "local/kenburns", allow: ["local/kenburns"] };
  });
  const video = await startTestGateway(home);
  t.teardown(() => video.shutdown());
  await video.gateway.videoPoller.stop(); // the job stays where the test puts it
  const director = await addKey(home, "director", "pro");
  const png = await sharp({ create: { width: 640, height: 400, channels: 3, background: { r: 40, g: 120, b: 200 } } })
    .png()
    .toBuffer();
  const states = async () => {
    const families = await scrape(video.url);
    return Object.fromEntries(["QUEUED", "SUBMITTED", "SUCCEEDED", "FAILED", "CANCELLED"].map((state) => [state, value(families, "gw_video_jobs", { state })]));
  };
  t.deepEqual(await states(), { QUEUED: 0, SUBMITTED: 0, SUCCEEDED: 0, FAILED: 0, CANCELLED: 0 });
  const headers = { authorization: `Bearer ${director}`, "content-type": "application/json" };
  const submitted = await fetch(`${video.url}/v1/video/generations`, {
    method: "POST",
    headers,
    body: JSON.stringify({ prompt: "a slow look", image_url: `data:image/png;base64,${png.toString("base64")}`, duration_seconds: 1, resolution: "480p" }),
  });
  t.is(submitted.status, 202);
  const { id } = (await submitted.json()) as { id: string };
  t.deepEqual(await states(), { QUEUED: 1, SUBMITTED: 0, SUCCEEDED: 0, FAILED: 0, CANCELLED: 0 });
  t.is((await fetch(`${video.url}/v1/video/jobs/${id}`, { method: "DELETE", headers })).status, 200);
  t.deepEqual(await states(), { QUEUED: 0, SUBMITTED: 0, SUCCEEDED: 0, FAILED: 0, CANCELLED: 1 });
});

test("the process's own metrics are there", async (t) => {
  const families = await scrape();
  t.truthy(series(families, "process_cpu_user_seconds_total"));
  t.truthy(series(families, "nodejs_eventloop_lag_seconds"));
  t.truthy(series(families, "nodejs_heap_size_used_bytes"));
});

test("metrics are text in Prometheus's exposition format, read on loopback without a key", async (t) => {
  const response = await fetch(`${gateway.url}/metrics`);
  t.is(response.status, 200);
  t.regex(response.headers.get("content-type")!, /^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusTextFormat(await response.text());
  const typeOf = (name: string) => families.find((family) => family.name === name)?.type;
  t.is(typeOf("gw_http_requests_total"), "COUNTER");
  t.is(typeOf("gw_http_requests_in_flight"), "GAUGE");
  for (const name of ["gw_http_request_duration_seconds", "gw_upstream_attempt_duration_seconds", "gw_usage_log_write_duration_seconds"])
    t.is(typeOf(name), "HISTOGRAM", name);
  const post = await fetch(`${gateway.url}/metrics`, { method: "POST" });
  t.is(post.status, 405);
});

test("from elsewhere, metrics need server.metricsToken (read from the environment), compared as a Bearer token", async (t) => {
  process.env.GW_TEST_METRICS_TOKEN = TOKEN;
  const home = await makeHome((config) => {
    config.server = { metricsToken: "${GW_TEST_METRICS_TOKEN}" };
  });
  const remote = await startServer({ home, host: "127.0.0.1", port: 0, logger: quietLogger, metricsPeersRemote: true });
  t.teardown(() => remote.shutdown());
  const refused = async (headers: Record<string, string>, code: string) => {
    const response = await fetch(`${remote.url}/metrics`, { headers });
    t.is(response.status, 401);
    t.is(response.headers.get("www-authenticate"), "Bearer");
    const body = (await response.json()) as { error: { code: string; type: string; message: string } };
    t.like(body.error, { code, type: "authentication_error" });
    t.false(body.error.message.includes(TOKEN));
  };
  await refused({}, "invalid_metrics_token");
  await refused({ authorization: `Bearer ${TOKEN}x` }, "invalid_metrics_token");
  await refused({ authorization: TOKEN }, "invalid_metrics_token");
  const families = parsePrometheusTextFormat(await scrapeText(remote.url, { headers: { authorization: `Bearer ${TOKEN}` } }));
  t.truthy(series(families, "gw_http_requests_total"));
});

test("from elsewhere with no token set, metrics answer 403", async (t) => {
  const home = await makeHome();
  const remote = await startServer({ home, host: "127.0.0.1", port: 0, logger: quietLogger, metricsPeersRemote: true });
  t.teardown(() => remote.shutdown());
  const response = await fetch(`${remote.url}/metrics`, { headers: { authorization: "Bearer anything-at-all-1234567" } });
  t.is(response.status, 403);
  t.like(((await response.json()) as { error: object }).error, { code: "metrics_loopback_only", type: "permission_error" });
});

test("loopback is decided by the socket's address alone", (t) => {
  for (const address of ["127.0.0.1", "127.3.4.5", "::1", "::ffff:127.0.0.1"]) t.true(isLoopbackAddress(address), address);
  for (const address of ["10.0.0.1", "192.168.1.20", "::ffff:10.0.0.1", "fe80::1", "2001:db8::1", "0.0.0.0", "localhost", "", undefined])
    t.false(isLoopbackAddress(address), String(address));
  t.is(metricsAccess(true, undefined, null), "allowed");
  t.is(metricsAccess(false, undefined, `Bearer ${TOKEN}`), "loopback_only");
  t.is(metricsAccess(false, "", `Bearer ${TOKEN}`), "loopback_only", "an unset ${NAME} is no token");
  t.is(metricsAccess(false, TOKEN, null), "token_required");
  t.is(metricsAccess(false, TOKEN, `Bearer ${TOKEN.slice(0, -1)}`), "token_required");
  t.is(metricsAccess(false, TOKEN, `bearer ${TOKEN}`), "allowed");
});

test("a metrics token shorter than 16 characters is refused at start", async (t) => {
  const home = await makeHome((config) => {
    config.server = { metricsToken: "short" };
  });
  const error = await t.throwsAsync(startServer({ home, host: "127.0.0.1", port: 0, logger: quietLogger }));
  t.regex(error!.message, /server\.metricsToken: use at least 16 characters/);
  t.false(error!.message.includes('short"'));
});

test("GET /ready: 200 with every check; 503 naming the usage log and the blob store when they cannot be written, 200 again after", async (t) => {
  const home = await makeHome();
  const ready = await startTestGateway(home);
  t.teardown(() => ready.shutdown());
  const get = async () => {
    const response = await fetch(`${ready.url}/ready`);
    return { status: response.status, body: (await response.json()) as any };
  };
  t.deepEqual(await get(), { status: 200, body: { status: "ready", checks: { config: "ok", metadata: "ok", usage_log: "ok", blob_store: "ok" } } });
  t.is((await fetch(`${ready.url}/health`)).status, 200);

  // A file where a folder should be: no write goes through, as root too.
  const paths = homePaths(home);
  renameSync(paths.usageDir, `${paths.usageDir}.away`);
  writeFileSync(paths.usageDir, "not a folder");
  rmSync(paths.blobsDir, { recursive: true, force: true });
  writeFileSync(paths.blobsDir, "not a folder");
  const failing = await get();
  t.is(failing.status, 503);
  t.deepEqual(failing.body, {
    error: { message: "Not ready: the usage_log, blob_store checks failed.", type: "service_unavailable", code: "not_ready" },
  });
  t.false(JSON.stringify(failing.body).includes(home), "no path");
  t.is((await get()).status, 503);

  rmSync(paths.usageDir);
  renameSync(`${paths.usageDir}.away`, paths.usageDir);
  rmSync(paths.blobsDir);
  mkdirSync(paths.blobsDir);
  t.is((await get()).status, 200);
  const lines = quietLogger.lines.filter((line) => line.includes("ready check"));
  t.is(lines.filter((line) => line.startsWith("warn ready check blob_store failed")).length, 1, "logged once however often polled");
  t.is(lines.filter((line) => line.startsWith("warn ready check usage_log failed")).length, 1);
  t.true(lines.includes("info ready check blob_store passes again"));
});
