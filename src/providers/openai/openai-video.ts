// Video generation against OpenAI's Videos API (Sora; https://platform.openai.com/docs/api-reference/videos) and compatible
// servers: a JSON submit to /videos (a first frame as `input_reference.image_url`, a data URL),
// polls of /videos/{id}, the finished clip's bytes streamed from /videos/{id}/content, and DELETE
// /videos/{id} to cancel (OpenAI deletes the video: polls answer 404 afterwards).

import { type AnswerKind, type UpstreamResponse, upstreamTarget } from "../../net/upstream-http.js";
import { bareMediaType } from "../image-bytes.js";
import { isObject } from "../openai-message-parts.js";
import type { ProviderContext } from "../provider.js";
import { UnsupportedContentError, UpstreamHttpError, UpstreamNetworkError } from "../provider-errors.js";
import { readRedactedJson } from "../sse.js";
import type { VideoCapability, VideoRequest, VideoTaskState } from "../video-types.js";
import { fromOpenAIHttpError } from "./openai-error.js";

/** The wait assumed when a poll is rate limited without Retry-After. */
export const OPENAI_VIDEO_POLL_PAUSE_MS = 10_000;

/** `prompt`'s limit in the API's schema. */
export const OPENAI_VIDEO_PROMPT_LIMIT = 32_000;

type Method = "GET" | "POST" | "DELETE";

export function createOpenAIVideo(context: ProviderContext): VideoCapability {
  // The configured base URL includes /v1, as for chat, images and audio.
  const baseUrl = (context.config.baseUrl ?? "https://api.openai.com/v1").replace(/\/+$/, "");
  const headers: Record<string, string> = { ...context.config.headers };
  if (context.config.apiKey) headers.authorization = `Bearer ${context.config.apiKey}`;
  const videoUrl = (taskId: string) => `${baseUrl}/videos/${encodeURIComponent(taskId)}`;

  /** `file`: the clip's bytes, which the poller bounds (size and time); else the API's JSON. */
  async function send(method: Method, url: string, signal: AbortSignal, body?: string, answer: AnswerKind = "video"): Promise<UpstreamResponse> {
    const callHeaders = body === undefined ? headers : { ...headers, "content-type": "application/json" };
    try {
      return await context.http.send(
        { provider: context.name, target: upstreamTarget(url), method, headers: callHeaders, body, signal, answer, redact: context.redact },
        context.upstream,
      );
    } catch (error) {
      throw error instanceof UpstreamHttpError ? fromOpenAIHttpError(error) : error;
    }
  }

  return {
    async submit(video, { signal }) {
      const body = JSON.stringify(convertToOpenAIVideo(video));
      const answer = await readRedactedJson(context, await send("POST", `${baseUrl}/videos`, signal, body), signal);
      if (!isObject(answer) || typeof answer.id !== "string" || answer.id === "") {
        throw new UpstreamNetworkError(context.name, "invalid_response", "the answer holds no video id");
      }
      return { taskId: answer.id };
    },

    async poll(taskId, { signal }) {
      let response: UpstreamResponse;
      try {
        response = await send("GET", videoUrl(taskId), signal);
      } catch (error) {
        if (!(error instanceof UpstreamHttpError)) throw error;
        // The video is gone (deleted, expired, never this account's); a rate limit is a pause.
        if (error.status === 404) return { state: "lost" };
        if (error.status === 429) return { state: "running", retryAfterMs: error.retryAfterMs ?? OPENAI_VIDEO_POLL_PAUSE_MS };
        throw error;
      }
      return convertFromOpenAIVideo(context.name, await readRedactedJson(context, response, signal));
    },

    async download(taskId, { signal, maxBytes }) {
      const response = await send("GET", `${videoUrl(taskId)}/content?variant=video`, signal, undefined, "file");
      const contentType = bareMediaType(response.headers["content-type"]);
      if (!contentType?.startsWith("video/")) {
        response.body.discard();
        throw new UpstreamNetworkError(context.name, "invalid_response", `the video's content is ${contentType ?? "of no stated type"}, not a video`);
      }
      const length = Number(firstHeader(response.headers["content-length"]));
      if (Number.isFinite(length) && length > maxBytes) {
        response.body.discard();
        throw new UpstreamNetworkError(context.name, "invalid_response", `the clip is ${length} bytes, over the limit of ${maxBytes}`);
      }
      // The body as it arrives: the gateway stores it (and caps it) without holding it whole.
      return { body: response.body.stream(), contentType };
    },

    async cancel(taskId, { signal }) {
      try {
        const response = await send("DELETE", videoUrl(taskId), signal);
        await response.body.drain();
      } catch (error) {
        // Already gone: nothing left to cancel.
        if (error instanceof UpstreamHttpError && error.status === 404) return;
        throw error;
      }
    },
  };
}

/** The vendor-neutral request as the JSON submit body: `seconds` is a string, `size` is `WxH`. */
export function convertToOpenAIVideo(request: VideoRequest): Record<string, unknown> {
  if (!Number.isInteger(request.durationSeconds) || request.durationSeconds <= 0) {
    throw new UnsupportedContentError(`OpenAI makes videos of whole seconds; not ${request.durationSeconds}.`, "duration");
  }
  if (request.prompt.length > OPENAI_VIDEO_PROMPT_LIMIT) {
    throw new UnsupportedContentError(`OpenAI takes video prompts of at most ${OPENAI_VIDEO_PROMPT_LIMIT} characters.`, "prompt");
  }
  const body: Record<string, unknown> = {
    model: request.model,
    prompt: request.prompt,
    seconds: String(request.durationSeconds),
    size: `${request.width}x${request.height}`,
  };
  if (request.image) body.input_reference = { image_url: `data:${request.image.mediaType};base64,${request.image.bytes.toString("base64")}` };
  return body;
}

/** A VideoResource (submit's and poll's answer) -> the job's state. */
export function convertFromOpenAIVideo(provider: string, video: unknown): VideoTaskState {
  if (!isObject(video) || typeof video.status !== "string") throw new UpstreamNetworkError(provider, "invalid_response", "the answer holds no video status");
  const progress = typeof video.progress === "number" && Number.isFinite(video.progress) ? Math.min(1, Math.max(0, video.progress / 100)) : undefined;
  switch (video.status) {
    case "queued":
      return progress ? { state: "queued", progress } : { state: "queued" };
    case "in_progress":
      return progress === undefined ? { state: "running" } : { state: "running", progress };
    case "completed":
      return { state: "succeeded", output: { kind: "provider" } };
    case "failed":
      return { state: "failed", error: failureText(video.error) };
    default:
      throw new UpstreamNetworkError(
        provider,
        "invalid_response",
        `the video's status ${JSON.stringify(video.status).slice(0, 40)} is not one OpenAI documents`,
      );
  }
}

/** `error.message` with `error.code` in parentheses. */
function failureText(error: unknown): string {
  const message = isObject(error) && typeof error.message === "string" && error.message.trim() !== "" ? error.message.trim() : undefined;
  const code = isObject(error) && typeof error.code === "string" && error.code !== "" ? error.code : undefined;
  const text = message ?? "OpenAI failed the video without saying why.";
  return code ? `${text} (${code})` : text;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
