// Video generation against Runway's API (https://docs.dev.runwayml.com/api/): a task is submitted to
// /v1/image_to_video (with a first frame) or /v1/text_to_video, polled at /v1/tasks/{id}, and
// cancelled (or, once finished, deleted) with DELETE on the same path. A finished task names its
// clip by URL (expiring in 24-48 h), which the gateway downloads itself.

import { type UpstreamResponse, upstreamTarget } from "../../net/upstream-http.js";
import { isObject } from "../openai-message-parts.js";
import type { ProviderContext } from "../provider.js";
import { UnsupportedContentError, UpstreamHttpError, UpstreamNetworkError } from "../provider-errors.js";
import { readRedactedJson } from "../sse.js";
import type { VideoCapability, VideoRequest, VideoTaskState } from "../video-types.js";
import { fromRunwayHttpError, RUNWAY_RATE_LIMIT_PAUSE_MS } from "./runway-error.js";

/** The API version every request names (`X-Runway-Version`, required). */
export const RUNWAY_API_VERSION = "2024-11-06";

/** promptText's limit, in UTF-16 code units. */
export const RUNWAY_PROMPT_LIMIT = 1000;

/** Models that take no text-only task (image to video only). */
const IMAGE_ONLY_MODELS = new Set(["gen4_turbo", "gen3a_turbo"]);

/** Models that need promptText even with a first frame. */
const PROMPT_REQUIRED_MODELS = new Set(["gen4.5"]);

export interface RunwayCall {
  method: "GET" | "POST" | "DELETE";
  /** From the API origin (`/v1/tasks/...`). */
  path: string;
  body?: string;
  signal: AbortSignal;
}

export type RunwayRequest = (call: RunwayCall) => Promise<UpstreamResponse>;

/** One call to Runway: its origin, the Bearer key and version headers, its errors in the OpenAI envelope. */
export function runwayRequest(context: ProviderContext): RunwayRequest {
  // The API origin; a base URL ending in /v1 works too.
  const { origin, path: basePath } = upstreamTarget((context.config.baseUrl ?? "https://api.dev.runwayml.com").replace(/\/+$/, "").replace(/\/v1$/, ""));
  const prefix = basePath.replace(/\/+$/, "");
  const headers: Record<string, string> = { "x-runway-version": RUNWAY_API_VERSION, ...context.config.headers };
  if (context.config.apiKey) headers.authorization = `Bearer ${context.config.apiKey}`;

  return async ({ method, path, body, signal }) => {
    const callHeaders = body === undefined ? headers : { ...headers, "content-type": "application/json" };
    try {
      return await context.http.send(
        { provider: context.name, target: { origin, path: `${prefix}${path}` }, method, headers: callHeaders, body, signal, redact: context.redact },
        context.upstream,
      );
    } catch (error) {
      throw error instanceof UpstreamHttpError ? fromRunwayHttpError(error) : error;
    }
  };
}

export function createRunwayVideo(context: ProviderContext): VideoCapability {
  const request = runwayRequest(context);
  const taskPath = (taskId: string) => `/v1/tasks/${encodeURIComponent(taskId)}`;

  return {
    async submit(video, { signal }) {
      const { path, body } = convertToRunwayTask(video);
      const response = await request({ method: "POST", path, body: JSON.stringify(body), signal });
      const answer = await readRedactedJson(context, response, signal);
      if (!isObject(answer) || typeof answer.id !== "string" || answer.id === "") {
        throw new UpstreamNetworkError(context.name, "invalid_response", "the answer holds no task id");
      }
      return { taskId: answer.id };
    },

    async poll(taskId, { signal }) {
      let response: UpstreamResponse;
      try {
        response = await request({ method: "GET", path: taskPath(taskId), signal });
      } catch (error) {
        if (!(error instanceof UpstreamHttpError)) throw error;
        // The task is gone (deleted, or never Runway's); a rate limit is a pause, not a failure.
        if (error.status === 404) return { state: "lost" };
        if (error.status === 429) return { state: "running", retryAfterMs: error.retryAfterMs ?? RUNWAY_RATE_LIMIT_PAUSE_MS };
        throw error;
      }
      return convertFromRunwayTask(context.name, await readRedactedJson(context, response, signal));
    },

    async cancel(taskId, { signal }) {
      try {
        const response = await request({ method: "DELETE", path: taskPath(taskId), signal });
        await response.body.dump();
      } catch (error) {
        // Already gone: nothing left to cancel.
        if (error instanceof UpstreamHttpError && error.status === 404) return;
        throw error;
      }
    },
  };
}

export interface RunwayTaskCall {
  path: "/v1/image_to_video" | "/v1/text_to_video";
  body: Record<string, unknown>;
}

/** The vendor-neutral request as Runway's task body; `ratio` is Runway's pixel `W:H` (`1280:720`). */
export function convertToRunwayTask(request: VideoRequest): RunwayTaskCall {
  if (!Number.isInteger(request.durationSeconds) || request.durationSeconds <= 0) {
    throw new UnsupportedContentError(`Runway makes clips of whole seconds; not ${request.durationSeconds}.`, "duration");
  }
  if (request.prompt.length > RUNWAY_PROMPT_LIMIT) {
    throw new UnsupportedContentError(`Runway takes prompts of at most ${RUNWAY_PROMPT_LIMIT} characters; this one has ${request.prompt.length}.`, "prompt");
  }
  const ratio = `${request.width}:${request.height}`;
  if (request.prompt === "" && PROMPT_REQUIRED_MODELS.has(request.model)) {
    throw new UnsupportedContentError(`Runway's ${request.model} needs a prompt.`, "prompt");
  }
  if (request.image) {
    const body: Record<string, unknown> = {
      model: request.model,
      promptImage: `data:${request.image.mediaType};base64,${request.image.bytes.toString("base64")}`,
    };
    if (request.prompt !== "") body.promptText = request.prompt;
    Object.assign(body, { ratio, duration: request.durationSeconds });
    return { path: "/v1/image_to_video", body };
  }
  if (IMAGE_ONLY_MODELS.has(request.model)) throw new UnsupportedContentError(`Runway's ${request.model} needs a first frame (image_url).`, "image_url");
  if (request.prompt === "") throw new UnsupportedContentError("Runway needs a prompt to make a clip without a first frame.", "prompt");
  return { path: "/v1/text_to_video", body: { model: request.model, promptText: request.prompt, ratio, duration: request.durationSeconds } };
}

/** A task as GET /v1/tasks/{id} answers it -> the job's state. */
export function convertFromRunwayTask(provider: string, task: unknown): VideoTaskState {
  if (!isObject(task) || typeof task.status !== "string") throw new UpstreamNetworkError(provider, "invalid_response", "the answer holds no task status");
  switch (task.status) {
    case "PENDING":
    case "THROTTLED":
      return { state: "queued" };
    case "RUNNING": {
      const progress = fractionOf(task.progress);
      return progress === undefined ? { state: "running" } : { state: "running", progress };
    }
    case "SUCCEEDED": {
      const url = (Array.isArray(task.output) ? task.output : []).find((item): item is string => typeof item === "string" && /^https?:\/\//i.test(item));
      return url ? { state: "succeeded", output: { kind: "url", url } } : { state: "failed", error: "Runway finished the task but returned no clip." };
    }
    case "FAILED":
      return { state: "failed", error: failureText(task) };
    case "CANCELLED":
      return { state: "cancelled" };
    default:
      throw new UpstreamNetworkError(provider, "invalid_response", `the task's status ${JSON.stringify(task.status).slice(0, 40)} is not one Runway documents`);
  }
}

/** `failure` (human text) with `failureCode` (SAFETY.INPUT.TEXT ...) in parentheses. */
function failureText(task: Record<string, unknown>): string {
  const failure = typeof task.failure === "string" && task.failure.trim() !== "" ? task.failure.trim() : "Runway failed the task without saying why.";
  return typeof task.failureCode === "string" && task.failureCode !== "" ? `${failure} (${task.failureCode})` : failure;
}

/** Runway's progress is a fraction 0-1 per its docs; a percentage is read as one too. */
function fractionOf(value: unknown): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return undefined;
  return Math.min(1, value > 1 ? value / 100 : value);
}
