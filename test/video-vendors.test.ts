// Video jobs through a real gateway against the Runway- and OpenAI-shaped fakes (scripted task
// transitions): image and text to video, Sora's streamed /content, what went upstream (version
// header, Bearer key, ratio, seconds as a string), the clip downloaded through the SSRF-safe
// fetcher and served by the job's link, billing once at the model's price per second; vendor
// failures, rate-limited polls (Retry-After honoured), vanished and stuck tasks, refused submits
// (final and passing), cancelling in every state, a `gw serve` restart in the middle of a job,
// overlapping ticks, and the vendor keys never shown.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import test, { type ExecutionContext } from "ava";
import sharp from "sharp";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { type FakeOpenAIVideo, startFakeOpenAIVideo } from "./fakes/openai-video.js";
import { type FakeRunway, RUNWAY_VERSION, startFakeRunway } from "./fakes/runway.js";
import type { VideoTaskScript } from "./fakes/video-tasks.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, makeHome, quietLogger, type RawConfig, spawnServe, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "./helpers/picture-hosts.js";
import { tempDir } from "./helpers/temp-dirs.js";

const run = promisify(execFile);
const RUNWAY_KEY = "rw-secret-key-123";
const OPENAI_KEY = "sk-video-secret-456";
const KEYS = [RUNWAY_KEY, OPENAI_KEY];

let photo: string;

test.before(async () => {
  const png = await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 30, g: 90, b: 160 } } })
    .composite([{ input: Buffer.from('<svg width="640" height="360"><circle cx="320" cy="180" r="90" fill="gold"/></svg>'), top: 0, left: 0 }])
    .png()
    .toBuffer();
  photo = `data:image/png;base64,${png.toString("base64")}`;
});

// Whatever any test's gateway logged: never a vendor key.
test.after("no vendor key in the server's log lines", (t) => {
  for (const line of quietLogger.lines) for (const key of KEYS) t.false(line.includes(key), line);
});

interface Setup {
  gateway: TestGateway;
  home: string;
  key: string;
  agentId: string;
  allowance: number;
  runway: FakeRunway;
  sora: FakeOpenAIVideo;
  hosts: PictureHosts;
  /** The gateway's `now`: the wall clock plus `offsetMs`, or `frozenAtMs` when a test sets it (and moves it itself). */
  clock: { offsetMs: number; frozenAtMs?: number };
  /** When each request reached a fake (epoch ms on the gateway's clock), beside its `requests`. */
  arrivals: WeakMap<object, number>;
}

interface StartOptions {
  video?: Record<string, unknown>;
  runway?: VideoTaskScript;
  sora?: VideoTaskScript;
}

async function start(t: ExecutionContext, options: StartOptions = {}): Promise<Setup> {
  const hosts = await startPictureHosts();
  t.teardown(() => hosts.close());
  const runway = await startFakeRunway({ apiKey: RUNWAY_KEY, clipOrigin: hosts.publicBase, ...options.runway });
  t.teardown(() => runway.close());
  const sora = await startFakeOpenAIVideo({ apiKey: OPENAI_KEY, ...options.sora });
  t.teardown(() => sora.close());
  // Runway's clip URLs name the public-looking host; it relays them to the fake.
  hosts.forward("/clips/", runway.url);
  const clock: Setup["clock"] = { offsetMs: 0 };
  const now = () => clock.frozenAtMs ?? Date.now() + clock.offsetMs;
  const arrivals = new WeakMap<object, number>();
  for (const requests of [runway.requests, sora.requests] as object[][]) {
    const push = requests.push.bind(requests);
    requests.push = (...items: object[]) => {
      for (const item of items) arrivals.set(item, now());
      return push(...items);
    };
  }
  const home = await makeHome((config) => vendorConfig(config, runway.url, sora.url, options.video));
  const key = await addKey(home, "director", "pro");
  const gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl, now });
  t.teardown(() => gateway.shutdown());
  const agentId = gateway.gateway.store.data.agents.find((agent) => agent.name === "director")!.id;
  const allowance = gateway.gateway.config.resolvedPlans.pro!.monthlyCredits;
  return { gateway, home, key, agentId, allowance, runway, sora, hosts, clock, arrivals };
}

function vendorConfig(config: RawConfig, runwayUrl: string, openaiUrl: string, video: Record<string, unknown> = {}): void {
  config.providers = {
    runway: { type: "runway", baseUrl: runwayUrl, apiKey: RUNWAY_KEY },
    openai: { type: "openai", baseUrl: openaiUrl, apiKey: OPENAI_KEY },
  };
  config.tools.video = { default: "runway/gen4_turbo", allow: ["runway/gen4_turbo", "runway/gen4.5", "openai/sora-2"] };
  config.video = { tickSeconds: 1, pollIntervalSeconds: 1, ...video };
  config.upstream = { ...config.upstream, retries: 0 };
}

interface Answer {
  status: number;
  body: any;
}

async function call(base: string, key: string, method: string, route: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const api = (setup: Setup, method: string, route: string, body?: unknown) => call(setup.gateway.url, setup.key, method, route, body);

async function submit(t: ExecutionContext, setup: Setup, body: Record<string, unknown>): Promise<string> {
  const answer = await api(setup, "POST", "/v1/video/generations", body);
  t.is(answer.status, 202, JSON.stringify(answer.body));
  t.is(answer.body.status, "QUEUED");
  return answer.body.id as string;
}

function waitFor(base: string, key: string, id: string, done: (job: any) => boolean): Promise<any> {
  return eventually(async () => (await call(base, key, "GET", `/v1/video/jobs/${id}`)).body, {
    until: done,
    what: `job ${id}`,
    timeoutMs: 60_000,
    intervalMs: 100,
  });
}

const waitJob = (setup: Setup, id: string, done: (job: any) => boolean) => waitFor(setup.gateway.url, setup.key, id, done);

const finished = (job: any) => ["SUCCEEDED", "FAILED", "CANCELLED"].includes(job.status);
const isSubmitted = (job: any) => job.status !== "QUEUED";

function videoRows(home: string): UsageRow[] {
  return UsageLog.readRows(homePaths(home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "video.generations");
}

function noKeys(t: ExecutionContext, ...values: unknown[]): void {
  for (const value of values) {
    const text = JSON.stringify(value);
    for (const key of KEYS) t.false(text.includes(key), `a vendor key in ${text}`);
  }
}

async function ffprobe(bytes: Buffer): Promise<{ codec: string; duration: number }> {
  const dir = tempDir("gw-video-vendors-");
  const file = path.join(dir, "clip.mp4");
  writeFileSync(file, bytes);
  const { stdout } = await run("ffprobe", ["-v", "error", "-show_entries", "format=duration:stream=codec_name", "-of", "json", file]);
  const parsed = JSON.parse(stdout) as { format: { duration: string }; streams: Array<{ codec_name: string }> };
  return { codec: parsed.streams[0]!.codec_name, duration: Number(parsed.format.duration) };
}

async function clipOf(t: ExecutionContext, job: any): Promise<{ codec: string; duration: number }> {
  t.truthy(job.resultUrl, JSON.stringify(job));
  const clip = await fetch(job.resultUrl);
  t.is(clip.status, 200);
  t.is(clip.headers.get("content-type"), "video/mp4");
  return ffprobe(Buffer.from(await clip.arrayBuffer()));
}

type Recorded = FakeRunway["requests"][number];
const submits = (fake: { requests: Recorded[] }) => fake.requests.filter((request) => request.method === "POST");
const pollsOf = (fake: { requests: Recorded[] }, taskId: string) =>
  fake.requests.filter((request) => request.method === "GET" && request.path.endsWith(`/${taskId}`));

test("Runway image to video: SUBMITTED then SUCCEEDED; version header, key, ratio, duration; the clip fetched from the vendor URL; billed once at 50000/s", async (t) => {
  const setup = await start(t);
  const id = await submit(t, setup, { prompt: "the sun rises over the hills", image_url: photo, model: "runway/gen4_turbo" });
  t.deepEqual(videoRows(setup.home), [], "nothing billed at submit");

  const running = await waitJob(setup, id, isSubmitted);
  t.is(running.status, "SUBMITTED", JSON.stringify(running));
  t.is(new Date(running.startedAt).toISOString(), running.startedAt);
  const job = await waitJob(setup, id, finished);
  t.is(job.status, "SUCCEEDED", JSON.stringify(job));
  t.truthy(job.finishedAt);

  const [sent, ...others] = submits(setup.runway);
  t.is(others.length, 0);
  t.is(sent!.path, "/v1/image_to_video");
  t.is(sent!.headers["x-runway-version"], RUNWAY_VERSION);
  t.is(sent!.headers.authorization, `Bearer ${RUNWAY_KEY}`);
  t.like(sent!.json, { model: "gen4_turbo", promptText: "the sun rises over the hills", ratio: "1280:720", duration: 5 });
  t.regex(sent!.json.promptImage, /^data:image\/png;base64,/);
  const task = [...setup.runway.tasks.values()][0]!;
  t.is(pollsOf(setup.runway, task.id).length, 3, "queued, running, succeeded");

  // The clip came from the vendor's URL, through the SSRF-safe fetcher (the public host relayed it).
  t.true(setup.hosts.publicHits.includes(`/clips/${task.id}.mp4`), JSON.stringify(setup.hosts.publicHits));
  t.true(setup.runway.requests.some((request) => request.path === `/clips/${task.id}.mp4` && request.query._jwt !== undefined));
  t.is(setup.hosts.internal.connections, 0);
  const probed = await clipOf(t, job);
  t.is(probed.codec, "h264");
  t.true(Math.abs(probed.duration - task.durationSeconds) <= 0.1, `${probed.duration} s`);

  const rows = videoRows(setup.home);
  t.is(rows.length, 1);
  t.like(rows[0]!, { model: "runway/gen4_turbo", provider: "runway", requestId: id, credits: 5 * 50_000 });
  t.is(rows[0]!.units.seconds, 5);
  t.is((await setup.gateway.gateway.ledger.planBalance(setup.agentId, setup.allowance)).remaining, setup.allowance - 5 * 50_000, "the hold became the bill");

  const late = await api(setup, "DELETE", `/v1/video/jobs/${id}`);
  t.is(late.status, 409);
  t.is(late.body.error.code, "video_job_finished");
  noKeys(t, running, job, late.body);
});

test("Runway text to video with gen4.5 works; gen4_turbo without a photo is 400 before anything is sent", async (t) => {
  const setup = await start(t);
  const refused = await api(setup, "POST", "/v1/video/generations", { prompt: "a red kite over the sea", model: "runway/gen4_turbo" });
  t.is(refused.status, 400);
  t.is(refused.body.error.param, "image_url");
  const tooLong = await api(setup, "POST", "/v1/video/generations", { prompt: "x".repeat(1001), model: "runway/gen4.5" });
  t.is(tooLong.status, 400);
  t.is(tooLong.body.error.param, "prompt");
  t.regex(tooLong.body.error.message, /runway\/gen4.5 takes prompts of at most 1000 characters; this one has 1001/);
  t.is(setup.runway.requests.length, 0, "nothing went to Runway");
  t.deepEqual((await api(setup, "GET", "/v1/video/jobs")).body.data, []);

  const id = await submit(t, setup, { prompt: "a red kite over the sea", model: "runway/gen4.5", duration_seconds: 3 });
  const job = await waitJob(setup, id, finished);
  t.is(job.status, "SUCCEEDED", JSON.stringify(job));
  const [sent] = submits(setup.runway);
  t.is(sent!.path, "/v1/text_to_video");
  t.deepEqual(sent!.json, { model: "gen4.5", promptText: "a red kite over the sea", ratio: "1280:720", duration: 3 });
  t.true(Math.abs((await clipOf(t, job)).duration - 3) <= 0.1);
  const rows = videoRows(setup.home);
  t.is(rows.length, 1);
  t.like(rows[0]!, { model: "runway/gen4.5", credits: 3 * 120_000 });
});

test("Sora: SUCCEEDED after its polls, the clip streamed from /content; seconds as a string, size 1280x720; billed at 100000/s", async (t) => {
  const setup = await start(t, { sora: { succeedAfterPolls: 3, clipChunkDelayMs: 200 } });
  const id = await submit(t, setup, { prompt: "waves on a pebble beach", model: "openai/sora-2" });
  const running = await waitJob(setup, id, (job) => job.progress !== undefined || finished(job));
  t.is(running.status, "SUBMITTED", JSON.stringify(running));
  t.true(running.progress > 0 && running.progress < 1, JSON.stringify(running));
  const job = await waitJob(setup, id, finished);
  t.is(job.progress, undefined);
  t.is(job.status, "SUCCEEDED", JSON.stringify(job));
  const [sent, ...others] = submits(setup.sora);
  t.is(others.length, 0);
  t.is(sent!.path, "/v1/videos");
  t.is(sent!.headers.authorization, `Bearer ${OPENAI_KEY}`);
  t.deepEqual(sent!.json, { model: "sora-2", prompt: "waves on a pebble beach", seconds: "4", size: "1280x720" });
  const task = [...setup.sora.tasks.values()][0]!;
  t.is(pollsOf(setup.sora, task.id).length, 4);
  const content = setup.sora.requests.filter((request) => request.path === `/v1/videos/${task.id}/content`);
  t.is(content.length, 1);
  t.is(content[0]!.query.variant, "video");
  t.is(setup.hosts.publicHits.length, 0, "no URL fetched: the clip came from the provider");
  const probed = await clipOf(t, job);
  t.is(probed.codec, "h264");
  t.true(Math.abs(probed.duration - 4) <= 0.1, `${probed.duration} s`);
  const rows = videoRows(setup.home);
  t.is(rows.length, 1);
  t.like(rows[0]!, { model: "openai/sora-2", provider: "openai", credits: 4 * 100_000 });
  t.is(rows[0]!.units.seconds, 4);
});

test("a vendor failure: FAILED with the vendor's reason, finishedAt, nothing billed, the held credits released", async (t) => {
  const setup = await start(t, { runway: { fail: { reason: "The prompt was flagged by moderation.", code: "SAFETY.INPUT.TEXT" } } });
  const id = await submit(t, setup, { prompt: "something flagged", image_url: photo });
  t.is((await setup.gateway.gateway.ledger.planBalance(setup.agentId, setup.allowance)).remaining, setup.allowance - 5 * 50_000, "the estimate is held");
  const job = await waitJob(setup, id, finished);
  t.is(job.status, "FAILED", JSON.stringify(job));
  t.is(job.error, "runway failed the job: The prompt was flagged by moderation. (SAFETY.INPUT.TEXT)");
  t.truthy(job.finishedAt);
  t.is(job.resultUrl, undefined);
  t.deepEqual(videoRows(setup.home), []);
  t.is((await setup.gateway.gateway.ledger.planBalance(setup.agentId, setup.allowance)).remaining, setup.allowance, "the hold is given back");
  const late = await api(setup, "DELETE", `/v1/video/jobs/${id}`);
  t.is(late.status, 409);
  t.is(late.body.error.code, "video_job_finished");
  noKeys(t, job, late.body);
});

test("a 429 on a poll: the job waits the Retry-After, makes no extra polls, and succeeds", async (t) => {
  const setup = await start(t, { video: { tickSeconds: 60 }, runway: { rateLimitOnPoll: { count: 1, retryAfterSeconds: 3 } } });
  const poller = setup.gateway.gateway.videoPoller;
  // The gateway's clock stands still and moves 100 ms a step, each step a tick whose operations
  // finish before the next: a poll arrives (by that clock) at the step it fell due, however
  // slow the machine, so the gap below measures the wait the gateway chose.
  setup.clock.frozenAtMs = Date.now();
  const id = await submit(t, setup, { prompt: "clouds racing", image_url: photo });
  const job = await eventually(
    async () => {
      await poller.tick();
      await poller.idle();
      setup.clock.frozenAtMs! += 100;
      return (await api(setup, "GET", `/v1/video/jobs/${id}`)).body;
    },
    { until: finished, what: `job ${id} to finish`, timeoutMs: 60_000 },
  );
  t.is(job.status, "SUCCEEDED", JSON.stringify(job));
  const task = [...setup.runway.tasks.values()][0]!;
  t.is(task.rateLimitedPolls, 1);
  const polls = pollsOf(setup.runway, task.id);
  t.is(polls.length, 4, "the 429, then queued, running, succeeded");
  const gap = setup.arrivals.get(polls[1]!)! - setup.arrivals.get(polls[0]!)!;
  t.true(gap >= 2900, `the poll after the 429 came ${gap} ms later`);
  t.true(gap < 6000, `the poll after the 429 came ${gap} ms later (Runway's default pause, not the Retry-After?)`);
  t.is(videoRows(setup.home).length, 1);
});

test("a vendor 500 on a poll is passing: the job polls again and succeeds, billed once", async (t) => {
  const setup = await start(t, { sora: { pollError: { status: 500, count: 2 } } });
  const id = await submit(t, setup, { prompt: "through the errors", model: "openai/sora-2" });
  const job = await waitJob(setup, id, finished);
  t.is(job.status, "SUCCEEDED", JSON.stringify(job));
  const task = [...setup.sora.tasks.values()][0]!;
  t.is(task.erroredPolls, 2);
  t.is(pollsOf(setup.sora, task.id).length, 5, "two errors, then queued, running, completed");
  t.is(videoRows(setup.home).length, 1);
});

test("a vanished task (404 on a poll): FAILED, the vendor no longer knows it; nothing billed", async (t) => {
  const setup = await start(t, { runway: { vanish: 1 } });
  const id = await submit(t, setup, { prompt: "gone", image_url: photo });
  const job = await waitJob(setup, id, finished);
  t.is(job.status, "FAILED", JSON.stringify(job));
  t.is(job.error, "runway no longer knows the job's task");
  t.deepEqual(videoRows(setup.home), []);
  t.is((await setup.gateway.gateway.ledger.planBalance(setup.agentId, setup.allowance)).remaining, setup.allowance);
});

test("a stuck task past maxJobMinutes: FAILED saying so, the vendor task cancelled, nothing billed", async (t) => {
  const setup = await start(t, { video: { maxJobMinutes: 1 }, runway: { slow: true } });
  const id = await submit(t, setup, { prompt: "forever", image_url: photo });
  await waitJob(setup, id, isSubmitted);
  const task = [...setup.runway.tasks.values()][0]!;
  await eventually(() => task.polls >= 1, "a poll");
  setup.clock.offsetMs = 61_000;
  const job = await waitJob(setup, id, finished);
  t.is(job.status, "FAILED", JSON.stringify(job));
  t.is(job.error, "the job did not finish within 1 minute");
  await eventually(() => setup.runway.cancels.includes(task.id), "the vendor's DELETE");
  t.true(setup.runway.requests.some((request) => request.method === "DELETE" && request.path === `/v1/tasks/${task.id}`));
  t.deepEqual(videoRows(setup.home), []);
  t.is((await setup.gateway.gateway.ledger.planBalance(setup.agentId, setup.allowance)).remaining, setup.allowance);
});

test("a submit refused with 400: FAILED with the vendor's message; a 503 is retried and the job succeeds", async (t) => {
  const setup = await start(t);
  setup.runway.enqueue({ rejectSubmit: { status: 400, body: { error: "Your image was rejected by our content filter." } } });
  const refused = await submit(t, setup, { prompt: "refused", image_url: photo });
  const failed = await waitJob(setup, refused, finished);
  t.is(failed.status, "FAILED", JSON.stringify(failed));
  t.is(failed.error, "runway refused the job: Your image was rejected by our content filter.");
  t.is(failed.startedAt, undefined, "never started");
  t.is(submits(setup.runway).length, 1, "a refusal is final");

  setup.runway.enqueue({ rejectSubmit: { status: 503 } });
  const retried = await submit(t, setup, { prompt: "retried", image_url: photo });
  const job = await waitJob(setup, retried, finished);
  t.is(job.status, "SUCCEEDED", JSON.stringify(job));
  t.is(submits(setup.runway).length, 3, "the refused one, the 503, the retry");
  t.is(setup.runway.tasks.size, 1);
  const rows = videoRows(setup.home);
  t.deepEqual(
    rows.map((row) => row.requestId),
    [retried],
  );
  noKeys(t, failed, job);
});

test("cancel while QUEUED and while SUBMITTED (the vendor task cancelled), then 409; never billed, credits released", async (t) => {
  const setup = await start(t, { video: { tickSeconds: 60 } });
  const poller = setup.gateway.gateway.videoPoller;

  const queued = await submit(t, setup, { prompt: "never sent", image_url: photo });
  const cancelled = await api(setup, "DELETE", `/v1/video/jobs/${queued}`);
  t.is(cancelled.status, 200);
  t.like(cancelled.body, { status: "CANCELLED", error: "cancelled by client" });
  t.truthy(cancelled.body.finishedAt);
  await poller.tick();
  await poller.idle();
  t.is(setup.runway.requests.length, 0, "a cancelled queued job is never submitted");

  const running = await submit(t, setup, { prompt: "cancelled at the vendor", image_url: photo });
  await poller.tick();
  await poller.idle();
  const submitted = (await api(setup, "GET", `/v1/video/jobs/${running}`)).body;
  t.is(submitted.status, "SUBMITTED", JSON.stringify(submitted));
  t.truthy(submitted.startedAt);
  const task = [...setup.runway.tasks.values()][0]!;
  const stopped = await api(setup, "DELETE", `/v1/video/jobs/${running}`);
  t.is(stopped.status, 200);
  t.like(stopped.body, { status: "CANCELLED", error: "cancelled by client" });
  await eventually(() => setup.runway.cancels.includes(task.id), "the vendor's DELETE");
  t.true(task.cancelled);
  // Past the poll it would have been due for (the poll interval is 1 s on the gateway's clock).
  setup.clock.offsetMs += 1100;
  await poller.tick();
  await poller.idle();
  t.is(pollsOf(setup.runway, task.id).length, 0, "a cancelled job is not polled");

  // Cancelled while its submit is on the wire: the task the vendor made is cancelled as soon as it is known.
  setup.runway.connection.enqueue({ firstByteDelayMs: 800 });
  const inFlight = await submit(t, setup, { prompt: "cancelled mid-submit", image_url: photo });
  const ticked = poller.tick();
  await eventually(() => submits(setup.runway).length === 2, "the second submit");
  const midway = await api(setup, "DELETE", `/v1/video/jobs/${inFlight}`);
  t.is(midway.status, 200);
  t.is(midway.body.status, "CANCELLED");
  await ticked;
  await poller.idle();
  const late = [...setup.runway.tasks.values()][1]!;
  t.true(setup.runway.cancels.includes(late.id), "the task made after the cancel is cancelled too");
  t.is((await api(setup, "GET", `/v1/video/jobs/${inFlight}`)).body.status, "CANCELLED");

  for (const id of [queued, running, inFlight]) {
    const again = await api(setup, "DELETE", `/v1/video/jobs/${id}`);
    t.is(again.status, 409);
    t.is(again.body.error.code, "video_job_finished");
    t.regex(again.body.error.message, /already finished \(CANCELLED\)/);
  }
  t.deepEqual(videoRows(setup.home), []);
  t.is((await setup.gateway.gateway.ledger.planBalance(setup.agentId, setup.allowance)).remaining, setup.allowance);
});

test("a job cancelled while the vendor's finished clip downloads is neither stored nor billed", async (t) => {
  const setup = await start(t, { video: { tickSeconds: 60 }, sora: { succeedAfterPolls: 0, clipChunkDelayMs: 1500 } });
  const poller = setup.gateway.gateway.videoPoller;
  const id = await submit(t, setup, { prompt: "cancelled late", model: "openai/sora-2" });
  await poller.tick();
  await poller.idle();
  t.is((await api(setup, "GET", `/v1/video/jobs/${id}`)).body.status, "SUBMITTED");
  // Its first poll falls due (the poll interval is 1 s on the gateway's clock).
  setup.clock.offsetMs += 1100;
  await poller.tick();
  await eventually(() => setup.sora.requests.some((request) => request.path.endsWith("/content")), "the clip's download");
  const cancelled = await api(setup, "DELETE", `/v1/video/jobs/${id}`);
  t.is(cancelled.status, 200, JSON.stringify(cancelled.body));
  t.is(cancelled.body.status, "CANCELLED");
  await poller.idle();
  const job = (await api(setup, "GET", `/v1/video/jobs/${id}`)).body;
  t.is(job.status, "CANCELLED");
  t.is(job.resultUrl, undefined);
  t.deepEqual(videoRows(setup.home), []);
  t.is((await setup.gateway.gateway.ledger.planBalance(setup.agentId, setup.allowance)).remaining, setup.allowance);
  const stored = await api(setup, "GET", "/v1/storage/files");
  t.is(stored.status, 200);
  t.deepEqual(stored.body.data, [], "the clip was not kept");
});

test("overlapping ticks against a vendor: one submit, one bill", async (t) => {
  const setup = await start(t, { video: { tickSeconds: 60 } });
  const poller = setup.gateway.gateway.videoPoller;
  const id = await submit(t, setup, { prompt: "ticks", image_url: photo });
  // Each round: overlapping ticks, more ticks while the operations they started are in flight,
  // then the gateway's clock moved past the next poll (the poll interval is 1 s).
  const job = await eventually(
    async () => {
      await Promise.all([poller.tick(), poller.tick(), poller.tick(), poller.tick()]);
      await Promise.all([poller.tick(), poller.tick()]);
      await poller.idle();
      setup.clock.offsetMs += 1100;
      return (await api(setup, "GET", `/v1/video/jobs/${id}`)).body;
    },
    { until: finished, what: `job ${id} to finish`, timeoutMs: 60_000 },
  );
  await poller.idle();
  t.is(job.status, "SUCCEEDED", JSON.stringify(job));
  t.is(submits(setup.runway).length, 1);
  const task = [...setup.runway.tasks.values()][0]!;
  t.is(setup.runway.requests.filter((request) => request.path === `/clips/${task.id}.mp4`).length, 1, "one download");
  t.is(videoRows(setup.home).length, 1);
});

test("a `gw serve` restart in the middle of a Sora job: it finishes after the restart, billed exactly once", async (t) => {
  const sora = await startFakeOpenAIVideo({ apiKey: OPENAI_KEY, succeedAfterPolls: 4 });
  t.teardown(() => sora.close());
  const home = await makeHome((config) => vendorConfig(config, "http://127.0.0.1:9", sora.url));
  const key = await addKey(home, "director", "pro");
  const first = await spawnServe(home);
  let second: Awaited<ReturnType<typeof spawnServe>> | undefined;
  t.teardown(() => {
    for (const serve of [first, second]) if (serve && serve.child.exitCode === null) serve.child.kill("SIGKILL");
  });
  const answer = await call(first.url, key, "POST", "/v1/video/generations", { prompt: "across a restart", model: "openai/sora-2" });
  t.is(answer.status, 202, JSON.stringify(answer.body));
  const id = answer.body.id as string;
  const running = await waitFor(first.url, key, id, isSubmitted);
  t.is(running.status, "SUBMITTED", JSON.stringify(running));
  first.child.kill("SIGTERM");
  t.is(await first.exited, 0, first.stderr());
  t.deepEqual(videoRows(home), []);

  second = await spawnServe(home);
  const job = await waitFor(second.url, key, id, finished);
  t.is(job.status, "SUCCEEDED", JSON.stringify(job));
  t.is(job.startedAt, running.startedAt, "the same vendor task, not a new one");
  t.is(submits(sora).length, 1);
  const rows = videoRows(home);
  t.is(rows.length, 1);
  t.like(rows[0]!, { requestId: id, credits: 4 * 100_000 });
  t.is((await fetch(job.resultUrl)).status, 200);
  second.child.kill("SIGTERM");
  await second.exited;
  for (const key of KEYS) t.false(first.stderr().includes(key) || second.stderr().includes(key), "a vendor key in the server's output");
  noKeys(t, running, job);
});

test("a vendor that echoes its key in a failure, an error body or a refusal: the key never reaches a job or the log", async (t) => {
  const setup = await start(t);
  setup.runway.enqueue(
    { fail: { reason: `The task failed for key ${RUNWAY_KEY}.`, afterPolls: 0 } },
    { pollError: { status: 400, body: { error: `Bad request with Bearer ${RUNWAY_KEY}` } } },
    { rejectSubmit: { status: 422, body: { error: `Key ${RUNWAY_KEY} may not use this model.` } } },
  );
  setup.sora.enqueue({ fail: { reason: `Failed for ${OPENAI_KEY}`, afterPolls: 0 } });
  const ids = [
    await submit(t, setup, { prompt: "one", image_url: photo }),
    await submit(t, setup, { prompt: "two", image_url: photo }),
    await submit(t, setup, { prompt: "three", image_url: photo }),
    await submit(t, setup, { prompt: "four", model: "openai/sora-2" }),
  ];
  const jobs = await Promise.all(ids.map((id) => waitJob(setup, id, finished)));
  for (const job of jobs) {
    t.is(job.status, "FAILED", JSON.stringify(job));
    t.truthy(job.error);
  }
  noKeys(t, jobs, (await api(setup, "GET", "/v1/video/jobs")).body);
  for (const line of quietLogger.lines) for (const key of KEYS) t.false(line.includes(key), line);
});
