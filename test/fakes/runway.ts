/**
 * Fake Runway API (reference video.md §2), on 127.0.0.1 port 0, with scripted tasks (video-tasks.ts).
 *  - POST /v1/image_to_video {model, promptImage (https URL or data:image/... URI), promptText?,
 *    ratio, duration} and POST /v1/text_to_video {model, promptText, ratio, duration} -> {id}
 *    (a uuid). Validated like the real API where it matters: the model, its ratios (pixel
 *    `W:H`) and durations, promptText (required for text to video and for gen4.5, <= 1000 characters), and
 *    gen4_turbo not taking text only.
 *  - GET /v1/tasks/{id}: {id, createdAt, status, progress?, output?, failure?, failureCode?}:
 *    PENDING (THROTTLED with `throttled`), RUNNING with progress 0-1, SUCCEEDED with
 *    `output: [<clip URL>]`, FAILED with failure and failureCode, CANCELLED after a DELETE.
 *  - DELETE /v1/tasks/{id}: 204; cancels a task that has not finished (polls answer CANCELLED),
 *    deletes a finished one (404 afterwards). Unknown tasks: 404.
 *  - GET /clips/{id}.mp4?_jwt=...: the clip, unauthenticated (like Runway's CDN): a real H.264
 *    mp4 as long as the task's `duration`, once the task succeeded.
 *  - Every /v1 request needs `Authorization: Bearer <key>` (the given `apiKey`, else any) and
 *    `X-Runway-Version: 2024-11-06` (400 without it); errors are {"error": "..."}.
 */
import { randomUUID } from "node:crypto";
import type http from "node:http";
import { type CommonBehaviour, type Exchange, interrupted, queryOf, sendJson, startFakeServer } from "./audio-fake-server.js";
import { fakeClip } from "./video-clips.js";
import { bearerOf, type FakeVideoTask, type FakeVideoVendor, sendClip, type TaskPhase, type VideoTaskScript, VideoTasks } from "./video-tasks.js";

export const RUNWAY_VERSION = "2024-11-06";

export interface FakeRunwayOptions extends VideoTaskScript {
  /** When set, `Authorization: Bearer <apiKey>` is required; otherwise any Bearer token. */
  apiKey?: string;
  /** The origin clip URLs name (default the fake's own, `http://127.0.0.1:PORT`); the fake serves them either way. */
  clipOrigin?: string;
}

export interface RecordedRunwayRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  query: Record<string, string>;
  /** The parsed JSON body, when there was one. */
  json?: any;
}

export interface FakeRunway extends FakeVideoVendor<RecordedRunwayRequest> {
  /** The URL a succeeded task's output names. */
  clipUrl(taskId: string): string;
}

/** Ratios and durations per model (reference video.md §2; the catalog's gen4.5 sizes). */
export const RUNWAY_MODELS: Record<string, { ratios: string[]; durations: number[]; textToVideo: boolean }> = {
  gen4_turbo: { ratios: ["1280:720", "720:1280", "1104:832", "832:1104", "960:960", "1584:672"], durations: [5, 10], textToVideo: false },
  "gen4.5": { ratios: ["1280:720", "720:1280"], durations: [2, 3, 4, 5, 6, 7, 8, 9, 10], textToVideo: true },
  "veo3.1": { ratios: ["1280:720", "720:1280", "1080:1920", "1920:1080"], durations: [4, 6, 8], textToVideo: true },
  "veo3.1_fast": { ratios: ["1280:720", "720:1280", "1080:1920", "1920:1080"], durations: [4, 6, 8], textToVideo: true },
};

class RunwayError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function startFakeRunway(options: FakeRunwayOptions = {}): Promise<FakeRunway> {
  const { apiKey, clipOrigin, ...initial } = options;
  const tasks = new VideoTasks(initial);
  let origin = "";
  const clipUrl = (taskId: string) => `${clipOrigin ?? origin}/clips/${taskId}.mp4?_jwt=fake-signed-${taskId.slice(0, 8)}`;

  async function handle(exchange: Exchange<CommonBehaviour>, requests: RecordedRunwayRequest[]): Promise<void> {
    const { request, response, url } = exchange;
    const method = request.method ?? "GET";
    const path = url.pathname.replace(/\/+$/, "");
    const recorded: RecordedRunwayRequest = { method, path, headers: { ...request.headers }, query: queryOf(url) };
    if (exchange.body.length > 0) {
      try {
        recorded.json = JSON.parse(exchange.body.toString("utf8"));
      } catch {
        recorded.json = undefined;
      }
    }
    requests.push(recorded);
    if (await interrupted(exchange)) return;
    try {
      const clip = /^\/clips\/([^/]+)\.mp4$/.exec(path);
      if (clip && method === "GET") return await serveClip(response, decodeURIComponent(clip[1]!));
      if (!path.startsWith("/v1/")) throw new RunwayError(404, "Not found");
      checkAuth(request);
      const task = /^\/v1\/tasks\/([^/]+)$/.exec(path);
      if ((path === "/v1/image_to_video" || path === "/v1/text_to_video") && method === "POST") return submit(exchange, recorded.json, path);
      if (task && method === "GET") return poll(response, decodeURIComponent(task[1]!));
      if (task && method === "DELETE") return cancel(response, decodeURIComponent(task[1]!));
      const known = task !== null || path === "/v1/image_to_video" || path === "/v1/text_to_video";
      throw known ? new RunwayError(405, "Method not allowed.") : new RunwayError(404, "Not found.");
    } catch (error) {
      if (!(error instanceof RunwayError)) throw error;
      sendJson(response, error.status, { error: error.message });
    }
  }

  function checkAuth(request: http.IncomingMessage): void {
    const token = bearerOf(request);
    if (token === undefined) throw new RunwayError(401, "Missing authorization header. Expected: Bearer <API key>.");
    if (apiKey !== undefined && token !== apiKey) throw new RunwayError(401, "Invalid API key.");
    const version = request.headers["x-runway-version"];
    if (version === undefined) throw new RunwayError(400, "The X-Runway-Version header is required. Set it to 2024-11-06.");
    if (version !== RUNWAY_VERSION) throw new RunwayError(400, `API version ${String(version)} is not supported. Use 2024-11-06.`);
  }

  function submit(exchange: Exchange<CommonBehaviour>, body: any, path: string): void {
    const imageToVideo = path === "/v1/image_to_video";
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new RunwayError(400, "The request body must be a JSON object.");
    const model = RUNWAY_MODELS[body.model];
    if (!model) throw new RunwayError(400, `Invalid model: ${JSON.stringify(body.model)}.`);
    if (imageToVideo) {
      const image = body.promptImage;
      if (typeof image !== "string" || !(/^https:\/\//.test(image) || /^data:image\/(png|jpeg|webp);base64,[A-Za-z0-9+/]+=*$/.test(image))) {
        throw new RunwayError(400, "promptImage must be an HTTPS URL or a data URI of a PNG, JPEG or WebP image.");
      }
    } else if (!model.textToVideo) {
      throw new RunwayError(400, `Model ${body.model} does not support text_to_video.`);
    }
    if (body.promptText !== undefined || !imageToVideo || body.model === "gen4.5") {
      if (typeof body.promptText !== "string" || body.promptText.length === 0) throw new RunwayError(400, "promptText is required.");
      if (body.promptText.length > 1000) throw new RunwayError(400, "promptText must be at most 1000 characters.");
    }
    if (!model.ratios.includes(body.ratio))
      throw new RunwayError(400, `Invalid ratio for ${body.model}: ${JSON.stringify(body.ratio)}. Expected one of ${model.ratios.join(", ")}.`);
    if (!model.durations.includes(body.duration)) throw new RunwayError(400, `Invalid duration for ${body.model}: ${JSON.stringify(body.duration)}.`);
    const script = tasks.nextScript();
    if (script.rejectSubmit) {
      const { status, body: errorBody, retryAfterSeconds } = script.rejectSubmit;
      const headers: Record<string, string> = retryAfterSeconds === undefined ? {} : { "retry-after": String(retryAfterSeconds) };
      sendJson(exchange.response, status, errorBody ?? { error: messageForStatus(status) }, headers);
      return;
    }
    const task = tasks.create(randomUUID(), script, body, body.duration);
    sendJson(exchange.response, 200, { id: task.id });
  }

  function poll(response: http.ServerResponse, id: string): void {
    const outcome = tasks.poll(id);
    if (outcome.kind === "unknown") throw new RunwayError(404, "Task not found.");
    if (outcome.kind === "rateLimited") {
      const headers: Record<string, string> = outcome.retryAfterSeconds === undefined ? {} : { "retry-after": String(outcome.retryAfterSeconds) };
      sendJson(response, 429, { error: "You have exceeded the rate limit. Retry with backoff." }, headers);
      return;
    }
    if (outcome.kind === "error") {
      sendJson(response, outcome.status, outcome.body ?? { error: messageForStatus(outcome.status) });
      return;
    }
    sendJson(response, 200, taskBody(tasks.tasks.get(id)!, outcome.phase));
  }

  function taskBody(task: FakeVideoTask, phase: TaskPhase): Record<string, unknown> {
    const base = { id: task.id, createdAt: task.createdAt.toISOString() };
    switch (phase.kind) {
      case "queued":
        return { ...base, status: task.script.throttled ? "THROTTLED" : "PENDING" };
      case "running":
        return { ...base, status: "RUNNING", progress: phase.progress };
      case "succeeded":
        return task.script.noOutput ? { ...base, status: "SUCCEEDED" } : { ...base, status: "SUCCEEDED", output: [clipUrl(task.id)] };
      case "failed":
        return phase.code === undefined
          ? { ...base, status: "FAILED", failure: phase.reason }
          : { ...base, status: "FAILED", failure: phase.reason, failureCode: phase.code };
      case "cancelled":
        return { ...base, status: "CANCELLED" };
    }
  }

  function cancel(response: http.ServerResponse, id: string): void {
    const task = tasks.cancel(id);
    if (!task) throw new RunwayError(404, "Task not found.");
    // A task still under way is cancelled; a finished one is deleted.
    if (task.finished) task.deleted = true;
    else task.cancelled = true;
    response.writeHead(204);
    response.end();
  }

  async function serveClip(response: http.ServerResponse, id: string): Promise<void> {
    const task = tasks.tasks.get(id);
    if (task?.finished?.kind !== "succeeded") {
      response.writeHead(404, { "content-type": "text/plain" });
      response.end("Not Found");
      return;
    }
    await sendClip(response, await fakeClip(task.durationSeconds), task.script.clipContentType ?? "video/mp4", task.script.clipChunkDelayMs);
  }

  const server = await startFakeServer<CommonBehaviour, RecordedRunwayRequest>({}, "", handle, (response, error) =>
    sendJson(response, 500, { error: `fake crashed: ${String(error)}` }),
  );
  origin = server.url;
  return {
    url: server.url,
    requests: server.requests,
    tasks: tasks.tasks,
    cancels: tasks.cancels,
    set: (script) => tasks.set(script),
    enqueue: (...scripts) => tasks.enqueue(...scripts),
    reset: () => {
      server.reset();
      tasks.reset();
    },
    connection: { set: server.set, enqueue: server.enqueue },
    close: server.close,
    clipUrl,
  };
}

function messageForStatus(status: number): string {
  if (status === 400) return "Invalid request.";
  if (status === 401) return "Invalid API key.";
  if (status === 429) return "You have exceeded the rate limit. Retry with backoff.";
  if (status >= 500) return "The service is overloaded. Retry with backoff.";
  return `Request failed with status ${status} (fake upstream).`;
}
