// Video generation against Runway's API (https://docs.dev.runwayml.com/api/): a task is submitted to
// /v1/image_to_video (with a first frame) or /v1/text_to_video, polled at /v1/tasks/{id}, and
// cancelled (or, once finished, deleted) with DELETE on the same path. A finished task names its
// clip by URL (expiring in 24-48 h), which the gateway downloads itself through its SSRF-safe
// fetcher; a link on the provider's own origin (a vendor-run proxy on a private network, which
// already receives the key) is fetched as the provider, through the upstream client
// (docs/decisions.md §8).

import type { ProviderContext } from "../provider.js";
import { UnsupportedContentError, UpstreamNetworkError } from "../provider-errors.js";
import { readAs } from "../upstream-schema.js";
import { cancelTask, fileLength, pollFailureState } from "../video-task-calls.js";
import type { VideoCapability, VideoRequest, VideoTaskState } from "../video-types.js";
import { RunwayTask } from "./runway-api.js";
import { RUNWAY_RATE_LIMIT_PAUSE_MS } from "./runway-error.js";
import { runwayRequest } from "./runway-request.js";

export { RUNWAY_API_VERSION } from "./runway-api.js";

/** promptText's limit, in UTF-16 code units. */
export const RUNWAY_PROMPT_LIMIT = 1000;

/** Models that take no text-only task (image to video only). */
const IMAGE_ONLY_MODELS = new Set(["gen4_turbo", "gen3a_turbo"]);

/** Models that need promptText even with a first frame. */
const PROMPT_REQUIRED_MODELS = new Set(["gen4.5"]);

export function createRunwayVideo(context: ProviderContext): VideoCapability {
  const vendor = runwayRequest(context);
  const taskPath = (taskId: string) => `/v1/tasks/${encodeURIComponent(taskId)}`;

  return {
    async submit(video, { signal }) {
      const { path, body } = convertToRunwayTask(video);
      const response = await vendor.send({ path, json: body, answer: "video", signal });
      const id = readAs(RunwayTask, await vendor.readJson(response, signal))?.id;
      if (!id) throw new UpstreamNetworkError(context.name, "invalid_response", "the answer holds no task id");
      return { taskId: id };
    },

    async poll(taskId, { signal }) {
      let response: Awaited<ReturnType<typeof vendor.send>>;
      try {
        response = await vendor.send({ path: taskPath(taskId), answer: "video", signal });
      } catch (error) {
        // The task is gone (deleted, or never Runway's); a rate limit is a pause, not a failure.
        return pollFailureState(error, RUNWAY_RATE_LIMIT_PAUSE_MS);
      }
      return convertFromRunwayTask(context.name, await vendor.readJson(response, signal), vendor.origin);
    },

    /** A clip link on the provider's own origin (convertFromRunwayTask hands only those over). */
    async download(_taskId, { signal, maxBytes, url }) {
      const link = url === undefined ? undefined : new URL(url);
      if (link === undefined || link.origin !== vendor.origin) throw new Error("Runway's clip is not on the provider's own origin");
      const response = await vendor.send({ path: `${link.pathname}${link.search}`, onOrigin: true, answer: "file", signal });
      if (fileLength(response) > maxBytes) {
        response.body.discard();
        throw new Error(`the clip is larger than the ${maxBytes}-byte limit`);
      }
      // The body as it arrives: the gateway caps it while storing it, never whole in memory.
      return { body: response.body.stream(), contentType: firstHeader(response.headers["content-type"]) ?? "video/mp4" };
    },

    cancel(taskId, { signal }) {
      return cancelTask(() => vendor.send({ method: "DELETE", path: taskPath(taskId), answer: "video", signal }));
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

/**
 * A task as GET /v1/tasks/{id} answers it -> the job's state. A clip link on `ownOrigin` (the
 * provider's configured one) is the provider's to fetch; any other the gateway's SSRF-safe fetcher's.
 */
export function convertFromRunwayTask(provider: string, body: unknown, ownOrigin?: string): VideoTaskState {
  const task = readAs(RunwayTask, body);
  if (task?.status === undefined) throw new UpstreamNetworkError(provider, "invalid_response", "the answer holds no task status");
  switch (task.status) {
    case "PENDING":
    case "THROTTLED":
      return { state: "queued" };
    case "RUNNING": {
      const progress = fractionOf(task.progress);
      return progress === undefined ? { state: "running" } : { state: "running", progress };
    }
    case "SUCCEEDED": {
      const url = (task.output ?? []).find((item): item is string => typeof item === "string" && /^https?:\/\//i.test(item));
      if (!url) return { state: "failed", error: "Runway finished the task but returned no clip." };
      return { state: "succeeded", output: ownOrigin !== undefined && originOf(url) === ownOrigin ? { kind: "provider", url } : { kind: "url", url } };
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
function failureText(task: RunwayTask): string {
  const failure = task.failure?.trim() || "Runway failed the task without saying why.";
  return task.failureCode ? `${failure} (${task.failureCode})` : failure;
}

/** Runway's progress is a fraction 0-1 per its docs; a percentage is read as one too. */
function fractionOf(value: number | undefined): number | undefined {
  if (value === undefined || !Number.isFinite(value) || value < 0) return undefined;
  return Math.min(1, value > 1 ? value / 100 : value);
}

/** A URL's origin (scheme, host, port as the URL standard writes them); undefined for one that does not parse. */
function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
