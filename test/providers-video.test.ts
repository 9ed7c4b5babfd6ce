// The video capability of the runway and openai provider types, through the registry and the real
// UpstreamHttp, against fakes speaking Runway's task API and OpenAI's Videos API with scripted
// task transitions: what went upstream (auth, version header, bodies for text and image), how
// every vendor state maps, rate-limited and vanished tasks, cancelling, the streamed clip, errors.

import type { Readable } from "node:stream";
import type { ExecutionContext } from "ava";
import test from "ava";
import { type UpstreamSettings, upstreamSchema } from "../src/config/config-schema.js";
import { DEFAULT_VIDEO_MODEL_INPUTS } from "../src/config/default-video-models.js";
import { secretRedactor } from "../src/net/secret-redaction.js";
import { UpstreamHttp } from "../src/net/upstream-http.js";
import type { Provider, ProviderContext } from "../src/providers/provider.js";
import { UnsupportedContentError, UpstreamHttpError, UpstreamNetworkError } from "../src/providers/provider-errors.js";
import { providerTypes } from "../src/providers/registry.js";
import { RUNWAY_API_VERSION } from "../src/providers/runway/runway-video.js";
import type { VideoCapability, VideoRequest, VideoTaskState } from "../src/providers/video-types.js";
import { pngFile } from "./fakes/image-files.js";
import { type FakeOpenAIVideo, startFakeOpenAIVideo } from "./fakes/openai-video.js";
import { type FakeRunway, startFakeRunway } from "./fakes/runway.js";
import { probeVideo } from "./fakes/video-clips.js";
import { providerHooks } from "./helpers/provider-hooks.js";

const KEY = "sk-video-test-key-0123456789";
const http = new UpstreamHttp();
const settings: UpstreamSettings = { ...upstreamSchema.parse({}), retries: 0 };
const options = () => ({ signal: new AbortController().signal });
const PNG = pngFile(64, 36);
const PNG_DATA_URL = `data:image/png;base64,${PNG.toString("base64")}`;

test.after.always(() => http.close());

function providerOf(type: string, baseUrl: string, apiKey = KEY): Provider {
  const context: ProviderContext = {
    name: type,
    config: { type, baseUrl, apiKey },
    upstream: settings,
    http,
    redact: secretRedactor([apiKey]),
    warn: providerHooks.warn,
  };
  return providerTypes.get(type)!.create(context);
}

async function runway(t: ExecutionContext, apiKey = KEY): Promise<{ fake: FakeRunway; video: VideoCapability }> {
  const fake = await startFakeRunway({ apiKey: KEY });
  t.teardown(() => fake.close());
  return { fake, video: providerOf("runway", fake.url, apiKey).video! };
}

async function openai(t: ExecutionContext, apiKey = KEY): Promise<{ fake: FakeOpenAIVideo; video: VideoCapability }> {
  const fake = await startFakeOpenAIVideo({ apiKey: KEY });
  t.teardown(() => fake.close());
  return { fake, video: providerOf("openai", fake.url, apiKey).video! };
}

function videoRequest(model: string, extra: Partial<VideoRequest> = {}): VideoRequest {
  return { model, prompt: "a red kite over the sea", durationSeconds: 5, resolution: "720p", ratio: "16:9", width: 1280, height: 720, ...extra };
}

const withImage = { image: { bytes: PNG, mediaType: "image/png", width: 64, height: 36 } };

async function polls(video: VideoCapability, taskId: string, count: number): Promise<VideoTaskState[]> {
  const states: VideoTaskState[] = [];
  for (let index = 0; index < count; index += 1) states.push(await video.poll(taskId, options()));
  return states;
}

/** The error's every text a caller or the log could see. */
function errorText(error: UpstreamHttpError): string {
  return [error.message, error.body, error.vendorBody ?? "", JSON.stringify(error.request ?? {})].join("\n");
}

function envelopeOf(error: UpstreamHttpError): { message: string; type: string; param: string | null; code: string | null } {
  return JSON.parse(error.body).error;
}

async function readAll(body: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body as Readable) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

test("registry: runway makes videos; openai adds video with download and cancel", (t) => {
  t.deepEqual(providerTypes.get("runway")!.capabilities, ["video"]);
  t.true(providerTypes.get("openai")!.capabilities.includes("video"));
  const runwayProvider = providerOf("runway", "https://api.dev.runwayml.com");
  t.is(runwayProvider.type, "runway");
  t.is(typeof runwayProvider.video!.submit, "function");
  t.is(typeof runwayProvider.video!.cancel, "function");
  // Runway's clips are URLs the gateway fetches; only one on the provider's own origin is its to download (video-runway-origin.test.ts).
  t.is(typeof runwayProvider.video!.download, "function");
  t.is(runwayProvider.chat, undefined);
  const openaiVideo = providerOf("openai", "https://api.openai.com/v1").video!;
  t.is(typeof openaiVideo.download, "function");
  t.is(typeof openaiVideo.cancel, "function");
  t.falsy(openaiVideo.resubmitsLostTasks);
});

test("catalog: every runway and openai model is one the fakes know, in sizes the adapters send as the vendor wants", async (t) => {
  const rw = await runway(t);
  const oa = await openai(t);
  for (const input of DEFAULT_VIDEO_MODEL_INPUTS.filter((model) => model.provider === "runway" || model.provider === "openai")) {
    const { video } = input.provider === "runway" ? rw : oa;
    const image = input.constraints.referenceImage === "required" ? withImage : {};
    for (const [resolution, ratios] of Object.entries(input.constraints.resolutions)) {
      for (const [ratio, size] of Object.entries(ratios as Record<string, string>)) {
        const [width, height] = size.split("x").map(Number) as [number, number];
        const durationSeconds = input.constraints.duration.default;
        const { taskId } = await video.submit(videoRequest(input.model, { ...image, resolution, ratio, width, height, durationSeconds }), options());
        t.truthy(taskId, `${input.id} ${resolution} ${ratio}`);
      }
    }
  }
});

// ---- Runway ----

test("runway image to video: POST /v1/image_to_video with the Bearer key, X-Runway-Version and a data URI", async (t) => {
  const { fake, video } = await runway(t);
  const { taskId } = await video.submit(videoRequest("gen4_turbo", withImage), options());
  t.regex(taskId, /^[0-9a-f-]{36}$/);
  const sent = fake.requests[0]!;
  t.is(sent.method, "POST");
  t.is(sent.path, "/v1/image_to_video");
  t.is(sent.headers.authorization, `Bearer ${KEY}`);
  t.is(sent.headers["x-runway-version"], "2024-11-06");
  t.is(RUNWAY_API_VERSION, "2024-11-06");
  t.is(sent.headers["content-type"], "application/json");
  t.deepEqual(sent.json, { model: "gen4_turbo", promptImage: PNG_DATA_URL, promptText: "a red kite over the sea", ratio: "1280:720", duration: 5 });
  t.is(fake.tasks.get(taskId)!.durationSeconds, 5);
});

test("runway text to video: POST /v1/text_to_video with promptText, the pixel ratio and the duration", async (t) => {
  const { fake, video } = await runway(t);
  await video.submit(videoRequest("gen4.5", { ratio: "9:16", width: 720, height: 1280, durationSeconds: 8 }), options());
  const sent = fake.requests[0]!;
  t.is(sent.path, "/v1/text_to_video");
  t.is(sent.headers["x-runway-version"], "2024-11-06");
  t.deepEqual(sent.json, { model: "gen4.5", promptText: "a red kite over the sea", ratio: "720:1280", duration: 8 });
});

test("runway: an image without a prompt sends no promptText", async (t) => {
  const { fake, video } = await runway(t);
  await video.submit(videoRequest("gen4_turbo", { ...withImage, prompt: "", durationSeconds: 10 }), options());
  t.deepEqual(fake.requests[0]!.json, { model: "gen4_turbo", promptImage: PNG_DATA_URL, ratio: "1280:720", duration: 10 });
});

test("runway: what Runway cannot take is refused before any call", async (t) => {
  const { fake, video } = await runway(t);
  const imageOnly = await t.throwsAsync(video.submit(videoRequest("gen4_turbo"), options()), { instanceOf: UnsupportedContentError });
  t.is(imageOnly.param, "image_url");
  const long = await t.throwsAsync(video.submit(videoRequest("gen4.5", { prompt: "x".repeat(1001) }), options()), { instanceOf: UnsupportedContentError });
  t.is(long.param, "prompt");
  const partial = await t.throwsAsync(video.submit(videoRequest("gen4.5", { durationSeconds: 4.5 }), options()), { instanceOf: UnsupportedContentError });
  t.is(partial.param, "duration");
  await t.throwsAsync(video.submit(videoRequest("gen4.5", { prompt: "" }), options()), { instanceOf: UnsupportedContentError });
  await t.throwsAsync(video.submit(videoRequest("gen4.5", { ...withImage, prompt: "" }), options()), { instanceOf: UnsupportedContentError });
  t.is(fake.requests.length, 0);
});

test("runway poll: PENDING -> queued, RUNNING -> running with progress, SUCCEEDED -> the clip's URL, a real mp4 as long as asked", async (t) => {
  const { fake, video } = await runway(t);
  const { taskId } = await video.submit(videoRequest("gen4.5", { durationSeconds: 3 }), options());
  const states = await polls(video, taskId, 4);
  t.deepEqual(states, [
    { state: "queued" },
    { state: "running", progress: 0.5 },
    // The fake names clips on its own origin, which is the provider's to fetch (docs/decisions.md §8).
    { state: "succeeded", output: { kind: "provider", url: fake.clipUrl(taskId) } },
    { state: "succeeded", output: { kind: "provider", url: fake.clipUrl(taskId) } },
  ]);
  const poll = fake.requests[1]!;
  t.is(poll.method, "GET");
  t.is(poll.path, `/v1/tasks/${taskId}`);
  t.is(poll.headers.authorization, `Bearer ${KEY}`);
  t.is(poll.headers["x-runway-version"], "2024-11-06");
  const url = (states[2] as { output: { url: string } }).output.url;
  t.true(url.startsWith(`${fake.url}/clips/${taskId}.mp4?`));
  const clip = await fetch(url);
  t.is(clip.headers.get("content-type"), "video/mp4");
  const probed = await probeVideo(Buffer.from(await clip.arrayBuffer()));
  t.is(probed?.codec, "h264");
  t.true(probed!.container.includes("mp4"));
  t.true(Math.abs(probed!.durationSeconds - 3) < 0.1, `duration ${probed?.durationSeconds}`);
});

test("runway poll: THROTTLED is queued; a longer script runs with rising progress", async (t) => {
  const { fake, video } = await runway(t);
  fake.enqueue({ throttled: true, queuedPolls: 2, succeedAfterPolls: 5 });
  const { taskId } = await video.submit(videoRequest("gen4.5"), options());
  const states = await polls(video, taskId, 6);
  t.deepEqual(
    states.map((state) => state.state),
    ["queued", "queued", "running", "running", "running", "succeeded"],
  );
  t.deepEqual(
    states.slice(2, 5).map((state) => (state as { progress?: number }).progress),
    [0.25, 0.5, 0.75],
  );
});

test("runway poll: FAILED carries the failure and its code; a SUCCEEDED task without output failed", async (t) => {
  const { fake, video } = await runway(t);
  fake.enqueue(
    { fail: { reason: "The prompt was flagged by moderation.", code: "SAFETY.INPUT.TEXT", afterPolls: 0 } },
    { fail: "Something broke." },
    { noOutput: true },
  );
  const flagged = await video.submit(videoRequest("gen4.5"), options());
  t.deepEqual(await video.poll(flagged.taskId, options()), { state: "failed", error: "The prompt was flagged by moderation. (SAFETY.INPUT.TEXT)" });
  const broke = await video.submit(videoRequest("gen4.5"), options());
  t.deepEqual((await polls(video, broke.taskId, 3))[2], { state: "failed", error: "Something broke." });
  const empty = await video.submit(videoRequest("gen4.5"), options());
  const emptyState = (await polls(video, empty.taskId, 3))[2]!;
  t.is(emptyState.state, "failed");
  t.regex((emptyState as { error: string }).error, /no clip/);
});

test("runway poll: a 429 is a pause (Retry-After, else 10 s), not an error; the task goes on", async (t) => {
  const { fake, video } = await runway(t);
  fake.enqueue({ rateLimitOnPoll: { count: 1, retryAfterSeconds: 7 } }, { rateLimitOnPoll: { count: 1 } });
  const told = await video.submit(videoRequest("gen4.5"), options());
  t.deepEqual(await polls(video, told.taskId, 2), [{ state: "running", retryAfterMs: 7000 }, { state: "queued" }]);
  const untold = await video.submit(videoRequest("gen4.5"), options());
  t.deepEqual(await video.poll(untold.taskId, options()), { state: "running", retryAfterMs: 10_000 });
});

test("runway poll: a vanished or unknown task is lost", async (t) => {
  const { fake, video } = await runway(t);
  fake.set({ vanish: 1 });
  const { taskId } = await video.submit(videoRequest("gen4.5"), options());
  t.deepEqual(await polls(video, taskId, 3), [{ state: "queued" }, { state: "lost" }, { state: "lost" }]);
  t.deepEqual(await video.poll("00000000-0000-0000-0000-000000000000", options()), { state: "lost" });
});

test("runway cancel: DELETE /v1/tasks/{id} with the headers, the task then CANCELLED; unknown tasks are fine", async (t) => {
  const { fake, video } = await runway(t);
  fake.set({ slow: true });
  const { taskId } = await video.submit(videoRequest("gen4.5"), options());
  t.deepEqual(
    (await polls(video, taskId, 3)).map((state) => state.state),
    ["queued", "running", "running"],
  );
  await video.cancel!(taskId, options());
  const sent = fake.requests.at(-1)!;
  t.is(sent.method, "DELETE");
  t.is(sent.path, `/v1/tasks/${taskId}`);
  t.is(sent.headers.authorization, `Bearer ${KEY}`);
  t.is(sent.headers["x-runway-version"], "2024-11-06");
  t.deepEqual(fake.cancels, [taskId]);
  t.deepEqual(await video.poll(taskId, options()), { state: "cancelled" });
  await t.notThrowsAsync(video.cancel!("00000000-0000-0000-0000-000000000000", options()));
  t.deepEqual(fake.cancels, [taskId]);
});

test("runway cancel: a finished task is deleted, and lost afterwards", async (t) => {
  const { fake, video } = await runway(t);
  fake.set({ succeedAfterPolls: 0 });
  const { taskId } = await video.submit(videoRequest("gen4.5"), options());
  t.is((await video.poll(taskId, options())).state, "succeeded");
  await video.cancel!(taskId, options());
  t.deepEqual(await video.poll(taskId, options()), { state: "lost" });
});

test("runway errors: {error} becomes the OpenAI envelope with the status kept, the key redacted everywhere", async (t) => {
  const { fake, video } = await runway(t);
  fake.enqueue(
    { rejectSubmit: { status: 400, body: { error: `Invalid header value: Bearer ${KEY}` } } },
    { rejectSubmit: { status: 429 } },
    { rejectSubmit: { status: 503, body: "<html>overloaded</html>", retryAfterSeconds: 3 } },
  );
  const invalid = await t.throwsAsync(video.submit(videoRequest("gen4.5"), options()), { instanceOf: UpstreamHttpError });
  t.is(invalid.status, 400);
  t.deepEqual(envelopeOf(invalid), { message: "Invalid header value: Bearer [REDACTED]", type: "invalid_request_error", param: null, code: "http_400" });
  t.false(errorText(invalid).includes(KEY));
  t.deepEqual(invalid.request, { method: "POST", path: "/v1/text_to_video" });
  const limited = await t.throwsAsync(video.submit(videoRequest("gen4.5"), options()), { instanceOf: UpstreamHttpError });
  t.is(limited.status, 429);
  t.is(envelopeOf(limited).type, "rate_limit_error");
  t.is(limited.retryAfterMs, 10_000);
  const overloaded = await t.throwsAsync(video.submit(videoRequest("gen4.5"), options()), { instanceOf: UpstreamHttpError });
  t.deepEqual(envelopeOf(overloaded), { message: "Runway answered HTTP 503.", type: "server_error", param: null, code: "http_503" });
  t.is(overloaded.retryAfterMs, 3000);
  t.is(overloaded.vendorBody, "<html>overloaded</html>");
});

test("runway errors: a wrong key is a 401; the vendor's validation message is passed on; a failing poll throws", async (t) => {
  const wrong = await runway(t, "sk-wrong-video-key-987654321");
  const denied = await t.throwsAsync(wrong.video.submit(videoRequest("gen4.5"), options()), { instanceOf: UpstreamHttpError });
  t.is(denied.status, 401);
  t.deepEqual(envelopeOf(denied), { message: "Invalid API key.", type: "authentication_error", param: null, code: "http_401" });
  t.false(errorText(denied).includes("sk-wrong-video-key-987654321"));

  const { fake, video } = await runway(t);
  const ratio = await t.throwsAsync(video.submit(videoRequest("gen4_turbo", { ...withImage, width: 1920, height: 1080 }), options()), {
    instanceOf: UpstreamHttpError,
  });
  t.is(ratio.status, 400);
  t.regex(envelopeOf(ratio).message, /Invalid ratio for gen4_turbo: "1920:1080"/);
  fake.set({ pollError: { status: 500, body: { error: `database down near Bearer ${KEY}` } } });
  const { taskId } = await video.submit(videoRequest("gen4.5"), options());
  const failing = await t.throwsAsync(video.poll(taskId, options()), { instanceOf: UpstreamHttpError });
  t.is(failing.status, 500);
  t.is(envelopeOf(failing).type, "server_error");
  t.false(errorText(failing).includes(KEY));
});

test("runway: a failure text that echoes the key is redacted; a dropped connection is a network error, not a lost task", async (t) => {
  const { fake, video } = await runway(t);
  fake.enqueue({ fail: { reason: `Bad token Bearer ${KEY}`, afterPolls: 0 } });
  const { taskId } = await video.submit(videoRequest("gen4.5"), options());
  t.deepEqual(await video.poll(taskId, options()), { state: "failed", error: "Bad token Bearer [REDACTED]" });
  fake.connection.enqueue({ dropConnection: true });
  const dropped = await t.throwsAsync(video.poll(taskId, options()), { instanceOf: UpstreamNetworkError });
  t.is(dropped.failure, "connection_lost");
});

test("runway: a base URL ending in /v1 works too", async (t) => {
  const fake = await startFakeRunway({ apiKey: KEY });
  t.teardown(() => fake.close());
  const video = providerOf("runway", `${fake.url}/v1/`).video!;
  await video.submit(videoRequest("gen4.5"), options());
  t.is(fake.requests[0]!.path, "/v1/text_to_video");
});

test("fake runway: X-Runway-Version and a Bearer key are required", async (t) => {
  const fake = await startFakeRunway();
  t.teardown(() => fake.close());
  const body = JSON.stringify({ model: "gen4.5", promptText: "hi", ratio: "1280:720", duration: 5 });
  const noVersion = await fetch(`${fake.url}/v1/text_to_video`, {
    method: "POST",
    headers: { authorization: "Bearer any-key", "content-type": "application/json" },
    body,
  });
  t.is(noVersion.status, 400);
  t.regex(((await noVersion.json()) as { error: string }).error, /X-Runway-Version/);
  const noKey = await fetch(`${fake.url}/v1/text_to_video`, { method: "POST", headers: { "x-runway-version": "2024-11-06" }, body });
  t.is(noKey.status, 401);
  const ok = await fetch(`${fake.url}/v1/text_to_video`, {
    method: "POST",
    headers: { authorization: "Bearer any-key", "x-runway-version": "2024-11-06", "content-type": "application/json" },
    body,
  });
  t.is(ok.status, 200);
  t.truthy(((await ok.json()) as { id: string }).id);
});

// ---- OpenAI Videos ----

test("openai submit: POST /videos as JSON, seconds as a string, size as WxH, the Bearer key", async (t) => {
  const { fake, video } = await openai(t);
  const { taskId } = await video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options());
  t.regex(taskId, /^video_[0-9a-f]+$/);
  const sent = fake.requests[0]!;
  t.is(sent.method, "POST");
  t.is(sent.path, "/v1/videos");
  t.is(sent.headers.authorization, `Bearer ${KEY}`);
  t.is(sent.headers["content-type"], "application/json");
  t.deepEqual(sent.json, { model: "sora-2", prompt: "a red kite over the sea", seconds: "4", size: "1280x720" });
});

test("openai submit: a first frame goes as input_reference.image_url, a data URL", async (t) => {
  const { fake, video } = await openai(t);
  await video.submit(
    videoRequest("sora-2-pro", { ...withImage, durationSeconds: 8, resolution: "1024p", width: 1024, height: 1792, ratio: "9:16" }),
    options(),
  );
  t.deepEqual(fake.requests[0]!.json, {
    model: "sora-2-pro",
    prompt: "a red kite over the sea",
    seconds: "8",
    size: "1024x1792",
    input_reference: { image_url: PNG_DATA_URL },
  });
});

test("openai poll: queued, in_progress with progress/100, completed -> the provider streams it", async (t) => {
  const { fake, video } = await openai(t);
  fake.set({ queuedPolls: 1, succeedAfterPolls: 3 });
  const { taskId } = await video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options());
  t.deepEqual(await polls(video, taskId, 5), [
    { state: "queued" },
    { state: "running", progress: 0.33 },
    { state: "running", progress: 0.67 },
    { state: "succeeded", output: { kind: "provider" } },
    { state: "succeeded", output: { kind: "provider" } },
  ]);
  t.is(fake.requests[1]!.method, "GET");
  t.is(fake.requests[1]!.path, `/v1/videos/${taskId}`);
  t.is(fake.requests[1]!.headers.authorization, `Bearer ${KEY}`);
});

test("openai poll: failed carries error.message and its code", async (t) => {
  const { fake, video } = await openai(t);
  fake.enqueue({ fail: { reason: "Your request was blocked by our moderation system.", code: "moderation_blocked", afterPolls: 1 } }, { fail: "It broke." });
  const blocked = await video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options());
  t.deepEqual(await polls(video, blocked.taskId, 2), [
    { state: "queued" },
    { state: "failed", error: "Your request was blocked by our moderation system. (moderation_blocked)" },
  ]);
  const broke = await video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options());
  t.deepEqual((await polls(video, broke.taskId, 3))[2], { state: "failed", error: "It broke. (video_generation_failed)" });
});

test("openai poll: 429 is running with retryAfterMs; 404 (vanished, unknown) is lost", async (t) => {
  const { fake, video } = await openai(t);
  fake.enqueue({ rateLimitOnPoll: { count: 2, retryAfterSeconds: 4 } }, { vanish: 0 });
  const limited = await video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options());
  t.deepEqual(await polls(video, limited.taskId, 3), [{ state: "running", retryAfterMs: 4000 }, { state: "running", retryAfterMs: 4000 }, { state: "queued" }]);
  const gone = await video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options());
  t.deepEqual(await video.poll(gone.taskId, options()), { state: "lost" });
  t.deepEqual(await video.poll("video_unknown", options()), { state: "lost" });
  fake.enqueue({ rateLimitOnPoll: { count: 1 } });
  const untold = await video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options());
  t.deepEqual(await video.poll(untold.taskId, options()), { state: "running", retryAfterMs: 10_000 });
});

test("openai download: GET /videos/{id}/content?variant=video streamed as it arrives, a real mp4 as long as asked", async (t) => {
  const { fake, video } = await openai(t);
  fake.set({ succeedAfterPolls: 0, clipChunkDelayMs: 400 });
  const { taskId } = await video.submit(videoRequest("sora-2", { durationSeconds: 8 }), options());
  t.is((await video.poll(taskId, options())).state, "succeeded");
  const started = Date.now();
  const { body, contentType } = await video.download!(taskId, { ...options(), maxBytes: 50 * 1024 * 1024 });
  const headersAfter = Date.now() - started;
  t.is(contentType, "video/mp4");
  t.false(Buffer.isBuffer(body));
  const bytes = await readAll(body);
  const wholeAfter = Date.now() - started;
  // The second half came 400 ms after the first: a stream is handed over before it is whole.
  t.true(wholeAfter - headersAfter >= 300, `handed over after ${headersAfter} ms, whole after ${wholeAfter} ms`);
  const sent = fake.requests.at(-1)!;
  t.is(sent.method, "GET");
  t.is(sent.path, `/v1/videos/${taskId}/content`);
  t.deepEqual(sent.query, { variant: "video" });
  t.is(sent.headers.authorization, `Bearer ${KEY}`);
  const probed = await probeVideo(bytes);
  t.is(probed?.codec, "h264");
  t.true(probed!.container.includes("mp4"));
  t.is(probed?.width, 320);
  t.true(Math.abs(probed!.durationSeconds - 8) < 0.1, `duration ${probed?.durationSeconds}`);
});

test("openai download: refuses content that is not a video, and a clip whose length is over maxBytes", async (t) => {
  const { fake, video } = await openai(t);
  fake.set({ succeedAfterPolls: 0 });
  fake.enqueue({ succeedAfterPolls: 0, clipContentType: "application/json" });
  const json = await video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options());
  await video.poll(json.taskId, options());
  const notVideo = await t.throwsAsync(video.download!(json.taskId, { ...options(), maxBytes: 50 * 1024 * 1024 }), { instanceOf: UpstreamNetworkError });
  t.is(notVideo.failure, "invalid_response");
  t.regex(notVideo.message, /application\/json, not a video/);
  const big = await video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options());
  await video.poll(big.taskId, options());
  const over = await t.throwsAsync(video.download!(big.taskId, { ...options(), maxBytes: 1000 }), { instanceOf: UpstreamNetworkError });
  t.is(over.failure, "invalid_response");
  t.regex(over.message, /over the limit of 1000/);
  // Not ready, or gone: the vendor's error.
  const early = await video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options());
  fake.tasks.get(early.taskId)!.script = { slow: true };
  const notReady = await t.throwsAsync(video.download!(early.taskId, { ...options(), maxBytes: 1000 }), { instanceOf: UpstreamHttpError });
  t.is(notReady.status, 400);
});

test("openai cancel: DELETE /videos/{id}; the video is gone (lost) afterwards; unknown videos are fine", async (t) => {
  const { fake, video } = await openai(t);
  fake.set({ slow: true });
  const { taskId } = await video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options());
  t.is((await video.poll(taskId, options())).state, "queued");
  await video.cancel!(taskId, options());
  const sent = fake.requests.at(-1)!;
  t.is(sent.method, "DELETE");
  t.is(sent.path, `/v1/videos/${taskId}`);
  t.is(sent.headers.authorization, `Bearer ${KEY}`);
  t.deepEqual(fake.cancels, [taskId]);
  t.deepEqual(await video.poll(taskId, options()), { state: "lost" });
  await t.notThrowsAsync(video.cancel!(taskId, options()));
  t.deepEqual(fake.cancels, [taskId]);
});

test("openai errors: OpenAI's envelope passes through redacted; a wrong key is a 401; a proxy's page gets an envelope", async (t) => {
  const { fake, video } = await openai(t);
  fake.enqueue({
    rejectSubmit: { status: 400, body: { error: { message: `Invalid header value: Bearer ${KEY}`, type: "invalid_request_error", param: null, code: null } } },
  });
  const echoed = await t.throwsAsync(video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options()), { instanceOf: UpstreamHttpError });
  t.is(echoed.status, 400);
  t.is(envelopeOf(echoed).message, "Invalid header value: Bearer [REDACTED]");
  t.false(errorText(echoed).includes(KEY));
  const seconds = await t.throwsAsync(video.submit(videoRequest("sora-2", { durationSeconds: 5 }), options()), { instanceOf: UpstreamHttpError });
  t.is(seconds.status, 400);
  t.is(envelopeOf(seconds).param, "seconds");
  fake.set({ pollError: { status: 502, body: "<html>bad gateway</html>" } });
  const { taskId } = await video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options());
  const proxy = await t.throwsAsync(video.poll(taskId, options()), { instanceOf: UpstreamHttpError });
  t.deepEqual(envelopeOf(proxy), { message: "OpenAI answered HTTP 502.", type: "server_error", param: null, code: "http_502" });

  const wrong = await openai(t, "sk-wrong-video-key-987654321");
  const denied = await t.throwsAsync(wrong.video.submit(videoRequest("sora-2", { durationSeconds: 4 }), options()), { instanceOf: UpstreamHttpError });
  t.is(denied.status, 401);
  t.is(envelopeOf(denied).code, "invalid_api_key");
  t.false(errorText(denied).includes("sk-wrong-video-key-987654321"));
});
