// Video jobs through a real gateway and the local ffmpeg engine: submit (202, nothing billed),
// poll to SUCCEEDED, the clip behind the signed link checked with ffprobe, billed once per second
// of finished clip; every refusal before anything is queued; another agent's job; cancel in each
// state; the link's fixed expiry (410 after, the same link on poll); a restart in the middle of a
// job; overlapping ticks.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import test from "ava";
import sharp from "sharp";
import { DEFAULT_VIDEO_MODEL_INPUTS } from "../src/config/default-video-models.js";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, makeHome, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { tempDir } from "./helpers/temp-dirs.js";

const run = promisify(execFile);
const KENBURNS = DEFAULT_VIDEO_MODEL_INPUTS.find((model) => model.id === "local/kenburns")!;
const PRICED = "local/kenburns-priced";
const PRICE_PER_SECOND = 1000;

let photo: string;

test.before(async () => {
  const png = await sharp({ create: { width: 800, height: 500, channels: 3, background: { r: 40, g: 120, b: 200 } } })
    .composite([{ input: Buffer.from('<svg width="800" height="500"><circle cx="400" cy="250" r="120" fill="orange"/></svg>'), top: 0, left: 0 }])
    .png()
    .toBuffer();
  photo = `data:image/png;base64,${png.toString("base64")}`;
});

interface Setup {
  gateway: TestGateway;
  home: string;
  key: string;
  /** Added to the wall clock (the gateway's `now`): tests move time forward. */
  clock: { offsetMs: number };
}

async function start(edit?: (config: RawConfig) => void, existingHome?: string, clock = { offsetMs: 0 }): Promise<Setup> {
  const home =
    existingHome ??
    (await makeHome((config) => {
      config.providers = { local: { type: "local" } };
      config.video = { tickSeconds: 1, pollIntervalSeconds: 1 };
      config.catalog = {
        video: [KENBURNS, { ...KENBURNS, id: PRICED, freeTier: false, pricing: { perSecond: { "480p": PRICE_PER_SECOND, "720p": 2000, "1080p": 3000 } } }],
      };
      config.tools.video = { default: "local/kenburns", allow: ["local/kenburns", PRICED] };
      config.plans = { tiny: { monthlyCredits: 2500, freeTierOnly: false } };
      edit?.(config);
    }));
  const gateway = await startTestGateway(home, { now: () => Date.now() + clock.offsetMs });
  const key = existingHome ? "" : await addKey(home, "director", "pro");
  return { gateway, home, key, clock };
}

async function call(setup: Setup, method: string, route: string, body?: unknown, key = setup.key): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${setup.gateway.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

function waitFor(setup: Setup, id: string, done: (job: any) => boolean, key = setup.key): Promise<any> {
  return eventually(async () => (await call(setup, "GET", `/v1/video/jobs/${id}`, undefined, key)).body, {
    until: done,
    what: `job ${id}`,
    timeoutMs: 40_000,
    intervalMs: 200,
  });
}

const finished = (job: any) => ["SUCCEEDED", "FAILED", "CANCELLED"].includes(job.status);

function videoRows(home: string): UsageRow[] {
  return UsageLog.readRows(homePaths(home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "video.generations");
}

async function ffprobe(bytes: Buffer): Promise<{ codec: string; width: number; height: number; duration: number; pixFmt: string }> {
  const dir = tempDir("gw-video-test-");
  const file = path.join(dir, "clip.mp4");
  writeFileSync(file, bytes);
  const { stdout } = await run("ffprobe", ["-v", "error", "-show_entries", "format=duration:stream=codec_name,width,height,pix_fmt", "-of", "json", file]);
  const parsed = JSON.parse(stdout) as { format: { duration: string }; streams: Array<{ codec_name: string; width: number; height: number; pix_fmt: string }> };
  const stream = parsed.streams[0]!;
  return { codec: stream.codec_name, width: stream.width, height: stream.height, duration: Number(parsed.format.duration), pixFmt: stream.pix_fmt };
}

test.serial("a local job: 202 QUEUED, then SUCCEEDED with a signed link to a real clip, billed once per second", async (t) => {
  const setup = await start();
  try {
    const submitted = await call(setup, "POST", "/v1/video/generations", {
      prompt: "a slow look at the orange sun",
      image_url: photo,
      model: PRICED,
      duration_seconds: 2,
      resolution: "480p",
      ratio: "16:9",
    });
    t.is(submitted.status, 202, JSON.stringify(submitted.body));
    t.deepEqual(Object.keys(submitted.body).sort(), ["id", "model", "queuedAt", "status"]);
    t.like(submitted.body, { status: "QUEUED", model: PRICED });
    t.regex(submitted.body.id, /^vid_/);
    t.is(submitted.headers.get("location"), `/v1/video/jobs/${submitted.body.id}`);
    t.deepEqual(videoRows(setup.home), [], "nothing billed at submit");

    const job = await waitFor(setup, submitted.body.id, finished);
    t.is(job.status, "SUCCEEDED", JSON.stringify(job));
    for (const field of ["queuedAt", "startedAt", "finishedAt", "resultExpiresAt"]) t.is(new Date(job[field]).toISOString(), job[field], field);
    t.is(Date.parse(job.resultExpiresAt) - Date.parse(job.finishedAt) < 24 * 3_600_000 + 5000, true);
    t.is(job.error, undefined);
    const clip = await fetch(job.resultUrl);
    t.is(clip.status, 200);
    t.is(clip.headers.get("content-type"), "video/mp4");
    const probed = await ffprobe(Buffer.from(await clip.arrayBuffer()));
    t.like(probed, { codec: "h264", width: 854, height: 480, pixFmt: "yuv420p" });
    t.true(Math.abs(probed.duration - 2) <= 0.1, `${probed.duration} s`);

    const rows = videoRows(setup.home);
    t.is(rows.length, 1);
    t.like(rows[0]!, { model: PRICED, provider: "local", requestId: submitted.body.id, credits: 2 * PRICE_PER_SECOND });
    t.is(rows[0]!.units.seconds, 2);

    // Polls after success keep the same link; the job is listed.
    const again = await call(setup, "GET", `/v1/video/jobs/${submitted.body.id}`);
    t.is(again.body.resultUrl, job.resultUrl);
    const listed = await call(setup, "GET", "/v1/video/jobs");
    t.is(listed.body.data[0].id, submitted.body.id);
    t.is(videoRows(setup.home).length, 1, "billed once");
  } finally {
    await setup.gateway.shutdown();
  }
});

test.serial("refusals before anything is queued or held: each names its parameter", async (t) => {
  const setup = await start();
  try {
    const cases: Array<[Record<string, unknown>, number, string, string | undefined]> = [
      [{ prompt: "text only" }, 400, "invalid_parameter", "image_url"],
      [{ prompt: "too long", image_url: photo, duration_seconds: 31 }, 400, "invalid_parameter", "duration_seconds"],
      [{ prompt: "bad tier", image_url: photo, resolution: "4K" }, 400, "invalid_parameter", "resolution"],
      [{ prompt: "bad ratio", image_url: photo, ratio: "2:1" }, 400, "invalid_parameter", "ratio"],
      [{ image_url: photo }, 400, "invalid_parameter", "prompt"],
      [{ prompt: "x", image_url: photo, fps: 60 }, 400, "invalid_parameter", "fps"],
      [{ prompt: "x", image_url: photo, model: "runway/gen4_turbo" }, 400, "model_not_allowed", "model"],
      [{ prompt: "x", image_url: "http://127.0.0.1:1/photo.png" }, 400, "url_not_allowed", "image_url"],
      [{ prompt: "x", image_url: "data:image/png;base64,bm90IGEgcGljdHVyZQ==" }, 400, "invalid_image", "image_url"],
    ];
    for (const [body, status, code, param] of cases) {
      const answer = await call(setup, "POST", "/v1/video/generations", body);
      t.is(answer.status, status, JSON.stringify(body));
      t.is(answer.body.error.code, code, JSON.stringify(answer.body));
      if (param) t.is(answer.body.error.param, param, JSON.stringify(body));
    }
    const text = await call(setup, "POST", "/v1/video/generations", { prompt: "text only" });
    t.regex(text.body.error.message, /local\/kenburns makes a clip from a reference photo/);
    const listed = await call(setup, "GET", "/v1/video/jobs");
    t.deepEqual(listed.body.data, [], "nothing was queued");

    const poor = await addKey(setup.home, "poor", "tiny");
    const short = await call(
      setup,
      "POST",
      "/v1/video/generations",
      { prompt: "x", image_url: photo, model: PRICED, duration_seconds: 3, resolution: "480p" },
      poor,
    );
    t.is(short.status, 402);
    t.is(short.body.error.code, "insufficient_credits");
    const free = await addKey(setup.home, "free-user", "free");
    const upgrade = await call(setup, "POST", "/v1/video/generations", { prompt: "x", image_url: photo, model: PRICED }, free);
    t.is(upgrade.status, 403);
    const anonymous = await fetch(`${setup.gateway.url}/v1/video/generations`, { method: "POST", body: "{}" });
    t.is(anonymous.status, 401);
  } finally {
    await setup.gateway.shutdown();
  }
});

test.serial("another agent's job is 404 like a missing one; cancel is 409 on a finished job; a cancelled job is never billed", async (t) => {
  const setup = await start();
  try {
    const submitted = await call(setup, "POST", "/v1/video/generations", { prompt: "x", image_url: photo, duration_seconds: 1, resolution: "480p" });
    const other = await addKey(setup.home, "someone-else", "pro");
    const hidden = await call(setup, "GET", `/v1/video/jobs/${submitted.body.id}`, undefined, other);
    const missing = await call(setup, "GET", "/v1/video/jobs/vid_01ARZ3NDEKTSV4RRFFQ69G5FAV", undefined, other);
    t.is(hidden.status, 404);
    t.deepEqual(hidden.body.error.code, missing.body.error.code);
    t.is((await call(setup, "DELETE", `/v1/video/jobs/${submitted.body.id}`, undefined, other)).status, 404);

    const done = await waitFor(setup, submitted.body.id, finished);
    t.is(done.status, "SUCCEEDED");
    const late = await call(setup, "DELETE", `/v1/video/jobs/${submitted.body.id}`);
    t.is(late.status, 409);
    t.is(late.body.error.code, "video_job_finished");
    t.regex(late.body.error.message, /already finished \(SUCCEEDED\)/);

    // A priced job cancelled while queued or running: CANCELLED, error says why, nothing billed, credits given back.
    const priced = await call(setup, "POST", "/v1/video/generations", {
      prompt: "x",
      image_url: photo,
      model: PRICED,
      duration_seconds: 20,
      resolution: "1080p",
    });
    t.is(priced.status, 202);
    const cancelled = await call(setup, "DELETE", `/v1/video/jobs/${priced.body.id}`);
    t.is(cancelled.status, 200);
    t.like(cancelled.body, { status: "CANCELLED", error: "cancelled by client" });
    t.truthy(cancelled.body.finishedAt);
    // A pass of the poller over the job, and every operation it (or the schedule) started done.
    const poller = setup.gateway.gateway.videoPoller;
    await poller.tick();
    await poller.idle();
    const after = await call(setup, "GET", `/v1/video/jobs/${priced.body.id}`);
    t.is(after.body.status, "CANCELLED");
    t.is(after.body.resultUrl, undefined);
    t.deepEqual(
      videoRows(setup.home).map((row) => row.requestId),
      [submitted.body.id],
    );
    const director = setup.gateway.gateway.store.data.agents.find((agent) => agent.name === "director")!;
    t.is((await setup.gateway.gateway.ledger.planBalance(director.id, 20_000_000)).remaining, 20_000_000, "the cancelled job's hold is given back");
  } finally {
    await setup.gateway.shutdown();
  }
});

test.serial("the result link expires at resultExpiresAt: 410 after, and a poll returns the same link", async (t) => {
  const clock = { offsetMs: 0 };
  const setup = await start(undefined, undefined, clock);
  try {
    const submitted = await call(setup, "POST", "/v1/video/generations", { prompt: "x", image_url: photo, duration_seconds: 1, resolution: "480p" });
    const job = await waitFor(setup, submitted.body.id, finished);
    t.is(job.status, "SUCCEEDED");
    t.is((await fetch(job.resultUrl)).status, 200);
    clock.offsetMs = Date.parse(job.resultExpiresAt) + 2000 - Date.now();
    const expired = await fetch(job.resultUrl);
    t.is(expired.status, 410);
    const polled = await call(setup, "GET", `/v1/video/jobs/${submitted.body.id}`);
    t.is(polled.body.resultUrl, job.resultUrl, "never a fresh link");
    t.is(polled.body.resultExpiresAt, job.resultExpiresAt);
  } finally {
    await setup.gateway.shutdown();
  }
});

test.serial("a restart in the middle of a job: it finishes after the restart and is billed once", async (t) => {
  const first = await start();
  const submitted = await call(first, "POST", "/v1/video/generations", {
    prompt: "x",
    image_url: photo,
    model: PRICED,
    duration_seconds: 3,
    resolution: "480p",
  });
  t.is(submitted.status, 202);
  await first.gateway.shutdown();
  const second = await start(undefined, first.home);
  try {
    const job = await waitFor({ ...second, key: first.key }, submitted.body.id, finished);
    t.is(job.status, "SUCCEEDED", JSON.stringify(job));
    const rows = videoRows(first.home);
    t.is(rows.length, 1);
    t.is(rows[0]!.credits, 3 * PRICE_PER_SECOND);
  } finally {
    await second.gateway.shutdown();
  }
});

test.serial("overlapping ticks: one submission and one bill per job", async (t) => {
  const setup = await start((config) => {
    // The schedule barely runs; the test drives the ticks itself.
    config.video = { tickSeconds: 60, pollIntervalSeconds: 1 };
  });
  try {
    const submitted = await call(setup, "POST", "/v1/video/generations", {
      prompt: "x",
      image_url: photo,
      model: PRICED,
      duration_seconds: 1,
      resolution: "480p",
    });
    const poller = setup.gateway.gateway.videoPoller;
    // Each round: overlapping ticks, then the gateway's clock moved past the next poll (1 s).
    const job = await eventually(
      async () => {
        await Promise.all([poller.tick(), poller.tick(), poller.tick()]);
        setup.clock.offsetMs += 1100;
        return (await call(setup, "GET", `/v1/video/jobs/${submitted.body.id}`)).body;
      },
      { until: finished, what: `job ${submitted.body.id} to finish`, timeoutMs: 40_000, intervalMs: 100 },
    );
    await poller.idle();
    t.is(job.status, "SUCCEEDED", JSON.stringify(job));
    t.is(videoRows(setup.home).length, 1);
  } finally {
    await setup.gateway.shutdown();
  }
});

test("GET /v1/public/video-models lists the models on offer with constraints and per-resolution prices, no key", async (t) => {
  const setup = await start();
  try {
    const response = await fetch(`${setup.gateway.url}/v1/public/video-models`);
    t.is(response.status, 200);
    const catalog = (await response.json()) as { models: Array<{ id: string; constraints: any; pricing: any }> };
    t.deepEqual(
      catalog.models.map((model) => model.id),
      ["local/kenburns", PRICED],
    );
    t.like(catalog.models[0]!.constraints, { referenceImage: "required", duration: { min: 1, max: 30, default: 5 }, defaultResolution: "720p" });
    t.deepEqual(catalog.models[0]!.constraints.resolutions, ["480p", "720p", "1080p"]);
    t.deepEqual(catalog.models[1]!.pricing, { perSecond: { "480p": PRICE_PER_SECOND, "720p": 2000, "1080p": 3000 } });
  } finally {
    await setup.gateway.shutdown();
  }
});
