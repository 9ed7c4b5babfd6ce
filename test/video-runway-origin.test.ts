// A Runway clip link on the provider's own configured origin (a vendor-run proxy on a private
// network: here the fake on 127.0.0.1) is fetched as the provider itself, through the upstream
// client, with the clip size cap; the gateway runs with the REAL SSRF-safe fetcher, which still
// refuses a link to any other private address (another loopback port).
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import test, { type ExecutionContext } from "ava";
import sharp from "sharp";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { type FakeRunway, startFakeRunway } from "./fakes/runway.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { tempDir } from "./helpers/temp-dirs.js";

const run = promisify(execFile);
const RUNWAY_KEY = "rw-origin-secret-789";
let photo: string;

test.before(async () => {
  const png = await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 90, g: 30, b: 160 } } })
    .png()
    .toBuffer();
  photo = `data:image/png;base64,${png.toString("base64")}`;
});

interface Setup {
  gateway: TestGateway;
  home: string;
  key: string;
  runway: FakeRunway;
}

async function start(t: ExecutionContext, options: { clipOrigin?: string; video?: Record<string, unknown> } = {}): Promise<Setup> {
  const runway = await startFakeRunway({ apiKey: RUNWAY_KEY, ...(options.clipOrigin ? { clipOrigin: options.clipOrigin } : {}) });
  t.teardown(() => runway.close());
  const home = await makeHome((config) => {
    config.providers = { runway: { type: "runway", baseUrl: runway.url, apiKey: RUNWAY_KEY } };
    config.tools.video = { default: "runway/gen4_turbo", allow: [] };
    config.video = { tickSeconds: 1, pollIntervalSeconds: 1, ...options.video };
    config.upstream = { ...config.upstream, retries: 0 };
  });
  const key = await addKey(home, "director", "pro");
  // No fetchUrl: the gateway's own SSRF-safe fetcher, as in production.
  const gateway = await startTestGateway(home);
  t.teardown(() => gateway.shutdown());
  return { gateway, home, key, runway };
}

async function api(setup: Setup, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${setup.gateway.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${setup.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function finishedJob(setup: Setup): Promise<any> {
  const submitted = await api(setup, "POST", "/v1/video/generations", { prompt: "a violet dusk", image_url: photo, duration_seconds: 5 });
  if (submitted.status !== 202) throw new Error(JSON.stringify(submitted.body));
  return eventually(async () => (await api(setup, "GET", `/v1/video/jobs/${submitted.body.id}`)).body, {
    until: (body) => ["SUCCEEDED", "FAILED", "CANCELLED"].includes(body.status),
    what: `job ${submitted.body.id} to finish`,
    timeoutMs: 60_000,
    intervalMs: 100,
  });
}

const clipRequests = (runway: FakeRunway) => runway.requests.filter((request) => request.path.startsWith("/clips/"));

test("a clip link on the provider's own origin is fetched from it: SUCCEEDED, a real clip, billed once", async (t) => {
  const setup = await start(t);
  const job = await finishedJob(setup);
  t.is(job.status, "SUCCEEDED", JSON.stringify(job));
  const task = [...setup.runway.tasks.values()][0]!;
  const [clipRequest, ...more] = clipRequests(setup.runway);
  t.is(more.length, 0, "one download");
  t.is(clipRequest?.method, "GET");
  t.is(clipRequest?.path, `/clips/${task.id}.mp4`);
  t.is(clipRequest?.query._jwt, `fake-signed-${task.id.slice(0, 8)}`, "the link's query kept");

  const clip = await fetch(job.resultUrl);
  t.is(clip.status, 200);
  const dir = tempDir("gw-runway-origin-");
  writeFileSync(path.join(dir, "clip.mp4"), Buffer.from(await clip.arrayBuffer()));
  const { stdout } = await run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path.join(dir, "clip.mp4")]);
  t.true(Math.abs(Number(stdout.trim()) - 5) < 0.5, stdout);
  const rows = UsageLog.readRows(homePaths(setup.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "video.generations");
  t.is(rows.length, 1);
  t.is(rows[0]!.units.seconds, 5);
});

test("the clip cap holds on the provider's origin too: a clip over video.maxClipBytes fails the job, unbilled", async (t) => {
  const setup = await start(t, { video: { maxClipBytes: 1000 } });
  const job = await finishedJob(setup);
  t.is(job.status, "FAILED", JSON.stringify(job));
  t.regex(job.error, /could not be downloaded from runway: .*1000-byte limit/);
  t.is(clipRequests(setup.runway).length, 1);
  const rows = UsageLog.readRows(homePaths(setup.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "video.generations");
  t.is(rows.length, 0);
});

test("a clip link to another private address (another loopback port) is still refused, and never reached", async (t) => {
  const hits: string[] = [];
  const elsewhere = createServer((request, response) => {
    hits.push(request.url ?? "/");
    response.writeHead(200, { "content-type": "video/mp4" }).end("not a clip");
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => elsewhere.close(() => resolve())));
  const setup = await start(t, { clipOrigin: `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}` });
  const job = await finishedJob(setup);
  t.is(job.status, "FAILED", JSON.stringify(job));
  t.regex(job.error, /could not be downloaded from runway: .*(loopback|private|not allowed)/i);
  t.deepEqual(hits, [], "the other server was never reached");
  t.is(clipRequests(setup.runway).length, 0);
});
