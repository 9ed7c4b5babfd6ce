// The local provider's video capability (`kenburns`) with the real ffmpeg: a task submitted,
// polled to the end and downloaded as an mp4 ffprobe accepts, its files gone once the download
// closes; text-only and unknown models refused; unknown ids `lost`; cancel kills the running
// ffmpeg (the id then answers `cancelled`, never `lost`, so the gateway does not submit it
// again) or drops a queued task; renders wait their turn under the concurrency limit; a failing
// engine reports its own message, never a path. Serial: every test checks the temp directory.
import { execFile } from "node:child_process";
import { chmodSync, createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import test from "ava";
import sharp from "sharp";
import { AudioEngineError } from "../src/media/audio-process.js";
import type { EngineInfo } from "../src/media/engines.js";
import { localProvider } from "../src/providers/local/local-provider.js";
import { createLocalVideo } from "../src/providers/local/local-video.js";
import type { ProviderContext } from "../src/providers/provider.js";
import { UnsupportedContentError } from "../src/providers/provider-errors.js";
import type { VideoCapability, VideoRequest, VideoTaskState } from "../src/providers/video-types.js";
import { eventually } from "./helpers/eventually.js";

const run = promisify(execFile);
const FFPROBE = "/usr/bin/ffprobe";

const scratch = mkdtempSync(path.join(os.tmpdir(), "gw-local-video-test-"));
const engineTemp = path.join(scratch, "engine-tmp");
const downloads = path.join(scratch, "downloads");
for (const directory of [engineTemp, downloads]) mkdirSync(directory);
// Every task's directory is made under here (os.tmpdir() reads TMPDIR).
process.env.TMPDIR = engineTemp;
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));

test.afterEach.always("no task directory is left behind", (t) => {
  t.deepEqual(readdirSync(engineTemp), []);
});

const signal = new AbortController().signal;
const ffmpegAt = (binary: string) => async (): Promise<EngineInfo> => ({ path: binary, version: "test", source: "PATH" });

const photo = (async () => {
  const width = 1600;
  const height = 1000;
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 3;
      pixels[at] = Math.round((x * 255) / width);
      pixels[at + 1] = Math.round((y * 255) / height);
      pixels[at + 2] = ((x >> 5) + (y >> 5)) % 2 ? 200 : 40;
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 85 })
    .toBuffer();
})();

async function request(overrides: Partial<VideoRequest> = {}): Promise<VideoRequest> {
  return {
    model: "kenburns",
    prompt: "a slow look across the picture",
    image: { bytes: await photo, mediaType: "image/jpeg", width: 1600, height: 1000 },
    durationSeconds: 2,
    resolution: "480p",
    ratio: "16:9",
    width: 854,
    height: 480,
    ...overrides,
  };
}

/** Poll the task until `done` says so; that state. */
function pollUntil(video: VideoCapability, taskId: string, done: (state: VideoTaskState) => boolean): Promise<VideoTaskState> {
  return eventually(() => video.poll(taskId, { signal }), { until: done, what: `task ${taskId}`, intervalMs: 20 });
}

/** ffmpeg processes writing into the tasks' temp directory. */
function runningEngines(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, "latin1");
      if (commandLine.includes(engineTemp) && commandLine.includes("ffmpeg")) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

const isFinished = (state: VideoTaskState) => state.state !== "queued" && state.state !== "running";

async function downloadTo(video: VideoCapability, taskId: string, name: string): Promise<string> {
  const file = path.join(downloads, name);
  const { body, contentType } = await video.download!(taskId, { signal, maxBytes: 64 * 1024 * 1024 });
  if (contentType !== "video/mp4") throw new Error(`content type ${contentType}`);
  await pipeline(body, createWriteStream(file));
  return file;
}

test.serial("submit, poll to succeeded, download: an mp4 of the asked size and length; the task is then forgotten", async (t) => {
  const video = createLocalVideo({ findEngine: ffmpegAt("/usr/bin/ffmpeg") });
  t.true(video.resubmitsLostTasks);
  const { taskId } = await video.submit(await request({ width: 480, height: 854, ratio: "9:16", durationSeconds: 2 }), { signal });
  t.regex(taskId, /^local_[0-9a-f]{24}$/);
  const first = await video.poll(taskId, { signal });
  t.true(first.state === "queued" || first.state === "running", first.state);
  const finished = await pollUntil(video, taskId, isFinished);
  t.deepEqual(finished, { state: "succeeded", output: { kind: "provider" } });
  t.is(readdirSync(engineTemp).length, 1, "the clip waits in the task's directory");

  const file = await downloadTo(video, taskId, "clip.mp4");
  const { stdout } = await run(FFPROBE, ["-v", "error", "-show_entries", "stream=codec_name,pix_fmt,width,height:format=duration", "-of", "json", file]);
  const info = JSON.parse(stdout) as { streams: Array<Record<string, unknown>>; format: { duration: string } };
  t.like(info.streams[0], { codec_name: "h264", pix_fmt: "yuv420p", width: 480, height: 854 });
  t.true(Math.abs(Number(info.format.duration) - 2) <= 0.1);
  await eventually(() => readdirSync(engineTemp).length === 0, "the task directories to be removed");
  t.deepEqual(await video.poll(taskId, { signal }), { state: "lost" });
  await t.throwsAsync(video.download!(taskId, { signal, maxBytes: 1 << 30 }), { message: /unknown/ });
});

test.serial("running tasks report progress between 0 and 1", async (t) => {
  const video = createLocalVideo();
  const { taskId } = await video.submit(await request({ width: 1280, height: 720, durationSeconds: 4 }), { signal });
  const seen: number[] = [];
  await eventually(
    async () => {
      const state = await video.poll(taskId, { signal });
      if (state.state === "running" && state.progress !== undefined) seen.push(state.progress);
      return state;
    },
    { until: isFinished, what: `task ${taskId} to finish`, intervalMs: 50 },
  );
  t.true(seen.length > 0);
  t.true(seen.every((progress, index) => progress >= 0 && progress <= 1 && (index === 0 || progress >= seen[index - 1]!)));
  t.true(
    seen.some((progress) => progress > 0),
    `progress seen: ${seen.join(", ")}`,
  );
  await video.cancel!(taskId, { signal });
});

test.serial("a text-only request is refused: kenburns needs a reference photo", async (t) => {
  const video = createLocalVideo({ findEngine: ffmpegAt("/usr/bin/ffmpeg") });
  const error = await t.throwsAsync(video.submit(await request({ image: undefined }), { signal }), { instanceOf: UnsupportedContentError });
  t.is(error.param, "image_url");
  t.regex(error.message, /kenburns needs a reference photo/);
  const other = await t.throwsAsync(video.submit(await request({ model: "sora-2" }), { signal }), { instanceOf: UnsupportedContentError });
  t.is(other.param, "model");
});

test.serial("an unknown task id is lost", async (t) => {
  const video = createLocalVideo();
  t.deepEqual(await video.poll("local_000000000000000000000000", { signal }), { state: "lost" });
  t.deepEqual(await video.poll("something else", { signal }), { state: "lost" });
  await t.notThrowsAsync(video.cancel!("local_000000000000000000000000", { signal }));
});

test.serial("cancel while running kills ffmpeg, removes the task's directory, and the task answers cancelled", async (t) => {
  const video = createLocalVideo();
  const { taskId } = await video.submit(await request({ width: 1280, height: 720, durationSeconds: 20 }), { signal });
  t.true(await eventually(() => runningEngines().length === 1, "ffmpeg to start"), "ffmpeg started");
  t.is((await video.poll(taskId, { signal })).state, "running");
  t.is(readdirSync(engineTemp).length, 1);
  await video.cancel!(taskId, { signal });
  t.deepEqual(runningEngines(), []);
  t.deepEqual(readdirSync(engineTemp), []);
  t.deepEqual(await video.poll(taskId, { signal }), { state: "cancelled" });
  await t.throwsAsync(video.download!(taskId, { signal, maxBytes: 1 << 30 }), { message: /no clip/ });
});

test.serial("with concurrency 1 the second task stays queued while the first renders, then runs", async (t) => {
  let limit = 1;
  const video = createLocalVideo({ concurrency: () => limit });
  const first = await video.submit(await request({ durationSeconds: 4 }), { signal });
  const second = await video.submit(await request({ durationSeconds: 1 }), { signal });
  const firstRunning = await pollUntil(video, first.taskId, (state) => state.state !== "queued");
  t.is(firstRunning.state, "running");
  t.is((await video.poll(second.taskId, { signal })).state, "queued");
  // While the first renders, the second never starts.
  let overlapped = false;
  await eventually(
    async () => {
      const [a, b] = await Promise.all([video.poll(first.taskId, { signal }), video.poll(second.taskId, { signal })]);
      if (a.state === "running" && b.state !== "queued") overlapped = true;
      if (a.state === "running") t.true(runningEngines().length <= 1);
      return a;
    },
    { until: (a) => a.state !== "running", what: "the first task to stop running", intervalMs: 20 },
  );
  t.false(overlapped);
  t.is((await video.poll(first.taskId, { signal })).state, "succeeded");
  t.is((await pollUntil(video, second.taskId, isFinished)).state, "succeeded");
  limit = 2;
  await downloadTo(video, first.taskId, "first.mp4");
  await downloadTo(video, second.taskId, "second.mp4");
  await eventually(() => readdirSync(engineTemp).length === 0, "the task directories to be removed");
});

test.serial("cancel of a queued task drops it before it renders", async (t) => {
  const video = createLocalVideo({ concurrency: () => 1 });
  const first = await video.submit(await request({ width: 1280, height: 720, durationSeconds: 20 }), { signal });
  const second = await video.submit(await request({ durationSeconds: 1 }), { signal });
  t.true(await eventually(() => runningEngines().length === 1, "ffmpeg to start"));
  t.is((await video.poll(second.taskId, { signal })).state, "queued");
  await video.cancel!(second.taskId, { signal });
  t.deepEqual(await video.poll(second.taskId, { signal }), { state: "cancelled" });
  t.is(runningEngines().length, 1, "the first still renders");
  await video.cancel!(first.taskId, { signal });
  t.deepEqual(runningEngines(), []);
  t.deepEqual(await video.poll(first.taskId, { signal }), { state: "cancelled" });
});

test.serial("a download destroyed half-way, or aborted by its signal, still removes the clip", async (t) => {
  const video = createLocalVideo();
  const a = await video.submit(await request({ durationSeconds: 1 }), { signal });
  const b = await video.submit(await request({ durationSeconds: 1 }), { signal });
  t.is((await pollUntil(video, a.taskId, isFinished)).state, "succeeded");
  t.is((await pollUntil(video, b.taskId, isFinished)).state, "succeeded");

  const destroyed = await video.download!(a.taskId, { signal, maxBytes: 1 << 30 });
  await t.throwsAsync(video.download!(a.taskId, { signal, maxBytes: 1 << 30 }), { message: /already being downloaded/ });
  (destroyed.body as NodeJS.ReadableStream & { destroy(): void }).destroy();

  const controller = new AbortController();
  const aborted = await video.download!(b.taskId, { signal: controller.signal, maxBytes: 1 << 30 });
  controller.abort(new Error("client went away"));
  await t.throwsAsync(pipeline(aborted.body, createWriteStream(path.join(downloads, "aborted.mp4"))), { message: "client went away" });

  t.true(await eventually(() => readdirSync(engineTemp).length === 0, "the task directories to be removed"));
  t.deepEqual(await video.poll(a.taskId, { signal }), { state: "lost" });
  t.deepEqual(await video.poll(b.taskId, { signal }), { state: "lost" });
});

test.serial("a clip larger than maxBytes is not handed over", async (t) => {
  const video = createLocalVideo();
  const { taskId } = await video.submit(await request({ durationSeconds: 1 }), { signal });
  t.is((await pollUntil(video, taskId, isFinished)).state, "succeeded");
  await t.throwsAsync(video.download!(taskId, { signal, maxBytes: 100 }), { message: /more than the 100 allowed/ });
  await video.cancel!(taskId, { signal });
  t.deepEqual(await video.poll(taskId, { signal }), { state: "cancelled" });
});

test.serial("a failing engine fails the task with its own message and no path", async (t) => {
  const fake = path.join(scratch, "broken-ffmpeg");
  writeFileSync(fake, `#!/bin/sh\necho "cannot write ${engineTemp}/x/clip.mp4" >&2\nexit 3\n`);
  chmodSync(fake, 0o755);
  const video = createLocalVideo({ findEngine: ffmpegAt(fake) });
  const { taskId } = await video.submit(await request({ durationSeconds: 1 }), { signal });
  const state = await pollUntil(video, taskId, isFinished);
  t.deepEqual(state, { state: "failed", error: "ffmpeg failed (exit status 3)" });
  rmSync(fake);
});

test.serial("no ffmpeg: submit fails with AudioEngineError missing_engine and registers nothing", async (t) => {
  const video = createLocalVideo({ findEngine: async () => null });
  const error = await t.throwsAsync(video.submit(await request(), { signal }), { instanceOf: AudioEngineError });
  t.is(error.reason, "missing_engine");
  t.is(error.engine, "ffmpeg");
});

test.serial("the local provider offers video", (t) => {
  t.true(localProvider.capabilities.includes("video"));
  const provider = localProvider.create({ name: "local" } as ProviderContext);
  t.true(provider.video?.resubmitsLostTasks);
});
