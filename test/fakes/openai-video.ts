/**
 * Fake OpenAI Videos API (Sora; reference video.md §1), on 127.0.0.1 port 0 (`url` ends in /v1),
 * with scripted tasks (video-tasks.ts).
 *  - POST /v1/videos (JSON): {prompt (1-32000 characters), model (sora-2, sora-2-pro, dated
 *    snapshots; default sora-2), seconds ("4" | "8" | "12", a string; default "4"), size
 *    (720x1280, 1280x720; sora-2-pro also 1024x1792, 1792x1024; default 720x1280),
 *    input_reference? ({image_url: https URL or data:image/...} or {file_id}, exactly one)}
 *    -> a VideoResource with status `queued`.
 *  - GET /v1/videos/{id}: the VideoResource: queued, in_progress (progress 0-100), completed
 *    (progress 100, completed_at, expires_at) or failed (error {code, message}).
 *  - GET /v1/videos/{id}/content?variant=video: the clip once completed, a real H.264 mp4 as
 *    long as `seconds` (`video/mp4`; 400 before, 404 for an unknown or deleted video; other
 *    variants 400).
 *  - DELETE /v1/videos/{id}: {id, object: "video.deleted", deleted: true}; the video is gone
 *    (404 afterwards).
 *  - `Authorization: Bearer <key>` on every request (the given `apiKey`, else any); errors
 *    {error: {message, type, param, code}}; `x-request-id` on every answer.
 */
import { randomBytes } from "node:crypto";
import type http from "node:http";
import { type CommonBehaviour, type Exchange, interrupted, queryOf, sendJson, startFakeServer } from "./audio-fake-server.js";
import { fakeClip } from "./video-clips.js";
import { bearerOf, type FakeVideoTask, type FakeVideoVendor, sendClip, type TaskPhase, type VideoTaskScript, VideoTasks } from "./video-tasks.js";

export interface FakeOpenAIVideoOptions extends VideoTaskScript {
  /** When set, `Authorization: Bearer <apiKey>` is required; otherwise any Bearer token. */
  apiKey?: string;
}

export interface RecordedVideoRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  query: Record<string, string>;
  /** The parsed JSON body, when there was one. */
  json?: any;
}

export type FakeOpenAIVideo = FakeVideoVendor<RecordedVideoRequest>;

export const SORA_SECONDS = ["4", "8", "12"];
const SIZES = ["720x1280", "1280x720"];
const PRO_SIZES = [...SIZES, "1024x1792", "1792x1024"];
/** How long a finished video's assets stay downloadable (not stated by the spec; a day here). */
const ASSET_LIFETIME_SECONDS = 24 * 3600;

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = "invalid_value",
    readonly type = "invalid_request_error",
  ) {
    super(message);
  }
}

export async function startFakeOpenAIVideo(options: FakeOpenAIVideoOptions = {}): Promise<FakeOpenAIVideo> {
  const { apiKey, ...initial } = options;
  const tasks = new VideoTasks(initial);

  async function handle(exchange: Exchange<CommonBehaviour>, requests: RecordedVideoRequest[]): Promise<void> {
    const { request, response, url } = exchange;
    response.setHeader("x-request-id", `req_video_${exchange.sequence}`);
    const method = request.method ?? "GET";
    const path = url.pathname.replace(/\/+$/, "");
    const recorded: RecordedVideoRequest = { method, path, headers: { ...request.headers }, query: queryOf(url) };
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
      checkAuth(request);
      const video = /^\/v1\/videos\/([^/]+)$/.exec(path);
      const content = /^\/v1\/videos\/([^/]+)\/content$/.exec(path);
      if (path === "/v1/videos" && method === "POST") return submit(exchange, recorded.json);
      if (video && method === "GET") return poll(response, decodeURIComponent(video[1]!));
      if (video && method === "DELETE") return remove(response, decodeURIComponent(video[1]!));
      if (content && method === "GET") return await serveContent(response, decodeURIComponent(content[1]!), recorded.query.variant ?? "video");
      throw new ApiError(404, `Invalid URL (${method} ${path})`, null, null);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      sendJson(response, error.status, { error: { message: error.message, type: error.type, param: error.param, code: error.code } });
    }
  }

  function checkAuth(request: http.IncomingMessage): void {
    const token = bearerOf(request);
    if (token === undefined) {
      throw new ApiError(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.", null, null);
    }
    if (apiKey !== undefined && token !== apiKey) throw new ApiError(401, "Incorrect API key provided: sk-****fake.", null, "invalid_api_key");
  }

  function submit(exchange: Exchange<CommonBehaviour>, body: any): void {
    if (!String(exchange.request.headers["content-type"] ?? "").startsWith("application/json")) {
      throw new ApiError(400, "The fake takes JSON bodies only (application/json).", null, "unsupported_content_type");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ApiError(400, "The body must be a JSON object.", null, "invalid_json");
    if (typeof body.prompt !== "string" || body.prompt.length === 0)
      throw new ApiError(400, "Missing required parameter: 'prompt'.", "prompt", "missing_required_parameter");
    if (body.prompt.length > 32_000) throw new ApiError(400, "'prompt' is too long: at most 32000 characters.", "prompt", "string_above_max_length");
    const model = body.model ?? "sora-2";
    if (typeof model !== "string" || !/^sora-2(-pro)?(-\d{4}-\d{2}-\d{2})?$/.test(model)) {
      throw new ApiError(400, `Invalid value for 'model': ${JSON.stringify(model)}.`, "model");
    }
    const seconds = body.seconds ?? "4";
    if (typeof seconds !== "string") throw new ApiError(400, "Invalid type for 'seconds': expected a string, but got a number.", "seconds", "invalid_type");
    if (!SORA_SECONDS.includes(seconds)) throw new ApiError(400, `Invalid value: '${seconds}'. Supported values are: '4', '8', and '12'.`, "seconds");
    const size = body.size ?? "720x1280";
    const sizes = model.startsWith("sora-2-pro") ? PRO_SIZES : SIZES;
    if (!sizes.includes(size))
      throw new ApiError(400, `Invalid value: '${String(size)}'. Supported values are: ${sizes.map((s) => `'${s}'`).join(", ")}.`, "size");
    if (body.input_reference !== undefined) checkReference(body.input_reference);
    const script = tasks.nextScript();
    if (script.rejectSubmit) {
      const { status, body: errorBody, retryAfterSeconds } = script.rejectSubmit;
      const headers: Record<string, string> = retryAfterSeconds === undefined ? {} : { "retry-after": String(retryAfterSeconds) };
      sendJson(exchange.response, status, errorBody ?? errorForStatus(status), headers);
      return;
    }
    const task = tasks.create(`video_${randomBytes(12).toString("hex")}`, script, { ...body, model, seconds, size }, Number(seconds));
    sendJson(exchange.response, 200, resource(task, { kind: "queued" }));
  }

  function poll(response: http.ServerResponse, id: string): void {
    const outcome = tasks.poll(id);
    if (outcome.kind === "unknown") throw notFound(id);
    if (outcome.kind === "rateLimited") {
      const headers: Record<string, string> = outcome.retryAfterSeconds === undefined ? {} : { "retry-after": String(outcome.retryAfterSeconds) };
      sendJson(response, 429, errorForStatus(429), headers);
      return;
    }
    if (outcome.kind === "error") {
      sendJson(response, outcome.status, outcome.body ?? errorForStatus(outcome.status));
      return;
    }
    sendJson(response, 200, resource(tasks.tasks.get(id)!, outcome.phase));
  }

  function remove(response: http.ServerResponse, id: string): void {
    const task = tasks.cancel(id);
    if (!task) throw notFound(id);
    task.cancelled = true;
    task.deleted = true;
    sendJson(response, 200, { id, object: "video.deleted", deleted: true });
  }

  async function serveContent(response: http.ServerResponse, id: string, variant: string): Promise<void> {
    const task = tasks.find(id);
    if (!task) throw notFound(id);
    if (!["video", "thumbnail", "spritesheet"].includes(variant)) throw new ApiError(400, `Invalid value for 'variant': '${variant}'.`, "variant");
    if (variant !== "video") throw new ApiError(400, `The fake serves the video variant only, not '${variant}'.`, "variant");
    if (task.finished?.kind !== "succeeded")
      throw new ApiError(400, `Video ${id} is not ready: its content is available once it completed.`, null, "video_not_ready");
    await sendClip(response, await fakeClip(task.durationSeconds), task.script.clipContentType ?? "video/mp4", task.script.clipChunkDelayMs);
  }

  const server = await startFakeServer<CommonBehaviour, RecordedVideoRequest>({}, "/v1", handle, (response, error) =>
    sendJson(response, 500, { error: { message: `fake crashed: ${String(error)}`, type: "server_error", param: null, code: null } }),
  );
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
  };
}

function checkReference(reference: unknown): void {
  if (typeof reference !== "object" || reference === null || Array.isArray(reference)) {
    throw new ApiError(400, "Invalid type for 'input_reference': expected an object.", "input_reference", "invalid_type");
  }
  const { image_url: imageUrl, file_id: fileId, ...others } = reference as Record<string, unknown>;
  if (Object.keys(others).length > 0)
    throw new ApiError(400, `Unknown parameter: 'input_reference.${Object.keys(others)[0]}'.`, "input_reference", "unknown_parameter");
  if ((imageUrl === undefined) === (fileId === undefined)) {
    throw new ApiError(400, "'input_reference' takes exactly one of 'image_url' and 'file_id'.", "input_reference");
  }
  if (
    imageUrl !== undefined &&
    (typeof imageUrl !== "string" || !(/^https:\/\//.test(imageUrl) || /^data:image\/(png|jpeg|webp);base64,[A-Za-z0-9+/]+=*$/.test(imageUrl)))
  ) {
    throw new ApiError(400, "'input_reference.image_url' must be an https URL or a base64 data URL of a PNG, JPEG or WebP image.", "input_reference.image_url");
  }
  if (fileId !== undefined && (typeof fileId !== "string" || !fileId.startsWith("file-"))) {
    throw new ApiError(400, "'input_reference.file_id' must name a file (file-...).", "input_reference.file_id");
  }
}

function resource(task: FakeVideoTask, phase: TaskPhase): Record<string, unknown> {
  const createdAt = Math.floor(task.createdAt.getTime() / 1000);
  const completedAt = phase.kind === "succeeded" || phase.kind === "failed" ? createdAt + 30 : null;
  const status = { queued: "queued", running: "in_progress", succeeded: "completed", failed: "failed", cancelled: "failed" }[phase.kind];
  const progress = phase.kind === "running" ? Math.round(phase.progress * 100) : phase.kind === "succeeded" ? 100 : 0;
  const error =
    phase.kind === "failed"
      ? { code: phase.code ?? "video_generation_failed", message: phase.reason }
      : phase.kind === "cancelled"
        ? { code: "cancelled", message: "The video was cancelled." }
        : null;
  return {
    id: task.id,
    object: "video",
    model: task.json.model,
    status,
    progress,
    created_at: createdAt,
    completed_at: completedAt,
    expires_at: phase.kind === "succeeded" && completedAt !== null ? completedAt + ASSET_LIFETIME_SECONDS : null,
    prompt: task.json.prompt,
    size: task.json.size,
    seconds: task.json.seconds,
    remixed_from_video_id: null,
    error,
  };
}

function notFound(id: string): ApiError {
  return new ApiError(404, `Video with id '${id}' not found.`, null, "video_not_found");
}

function errorForStatus(status: number): unknown {
  if (status === 401)
    return { error: { message: "Incorrect API key provided: sk-****fake.", type: "invalid_request_error", param: null, code: "invalid_api_key" } };
  if (status === 429) {
    return {
      error: { message: "Rate limit reached for videos per minute. Please try again later.", type: "requests", param: null, code: "rate_limit_exceeded" },
    };
  }
  if (status >= 500) return { error: { message: "The server had an error while processing your request.", type: "server_error", param: null, code: null } };
  return { error: { message: `Request failed with status ${status} (fake upstream).`, type: "invalid_request_error", param: null, code: null } };
}
