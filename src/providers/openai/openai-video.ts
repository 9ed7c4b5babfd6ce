// Video generation against OpenAI's Videos API (Sora; https://platform.openai.com/docs/api-reference/videos) and compatible
// servers: a JSON submit to /videos (a first frame as `input_reference.image_url`, a data URL),
// polls of /videos/{id}, the finished clip's bytes streamed from /videos/{id}/content, and DELETE
// /videos/{id} to cancel (OpenAI deletes the video: polls answer 404 afterwards).

import { bareMediaType } from "../image-bytes.js";
import type { ProviderContext } from "../provider.js";
import { UnsupportedContentError, UpstreamNetworkError } from "../provider-errors.js";
import { readAs } from "../upstream-schema.js";
import { cancelTask, fileLength, pollFailureState } from "../video-task-calls.js";
import type { VideoCapability, VideoRequest, VideoTaskState } from "../video-types.js";
import { OpenAIVideo } from "./openai-api.js";
import { openaiRequest } from "./openai-request.js";

/** The wait assumed when a poll is rate limited without Retry-After. */
export const OPENAI_VIDEO_POLL_PAUSE_MS = 10_000;

/** `prompt`'s limit in the API's schema. */
export const OPENAI_VIDEO_PROMPT_LIMIT = 32_000;

export function createOpenAIVideo(context: ProviderContext): VideoCapability {
  // The configured base URL includes /v1, as for chat, images and audio.
  const vendor = openaiRequest(context);
  const videoPath = (taskId: string) => `/videos/${encodeURIComponent(taskId)}`;

  return {
    async submit(video, { signal }) {
      const response = await vendor.send({ path: "/videos", json: convertToOpenAIVideo(video), answer: "video", signal });
      const id = readAs(OpenAIVideo, await vendor.readJson(response, signal))?.id;
      if (!id) throw new UpstreamNetworkError(context.name, "invalid_response", "the answer holds no video id");
      return { taskId: id };
    },

    async poll(taskId, { signal }) {
      let response: Awaited<ReturnType<typeof vendor.send>>;
      try {
        response = await vendor.send({ path: videoPath(taskId), answer: "video", signal });
      } catch (error) {
        // The video is gone (deleted, expired, never this account's); a rate limit is a pause.
        return pollFailureState(error, OPENAI_VIDEO_POLL_PAUSE_MS);
      }
      return convertFromOpenAIVideo(context.name, await vendor.readJson(response, signal));
    },

    async download(taskId, { signal, maxBytes }) {
      const response = await vendor.send({ path: `${videoPath(taskId)}/content?variant=video`, answer: "file", signal });
      const contentType = bareMediaType(response.headers["content-type"]);
      if (!contentType?.startsWith("video/")) {
        response.body.discard();
        throw new UpstreamNetworkError(context.name, "invalid_response", `the video's content is ${contentType ?? "of no stated type"}, not a video`);
      }
      const length = fileLength(response);
      if (length > maxBytes) {
        response.body.discard();
        throw new UpstreamNetworkError(context.name, "invalid_response", `the clip is ${length} bytes, over the limit of ${maxBytes}`);
      }
      // The body as it arrives: the gateway stores it (and caps it) without holding it whole.
      return { body: response.body.stream(), contentType };
    },

    cancel(taskId, { signal }) {
      return cancelTask(() => vendor.send({ method: "DELETE", path: videoPath(taskId), answer: "video", signal }));
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
export function convertFromOpenAIVideo(provider: string, body: unknown): VideoTaskState {
  const video = readAs(OpenAIVideo, body);
  if (video?.status === undefined) throw new UpstreamNetworkError(provider, "invalid_response", "the answer holds no video status");
  const progress = video.progress === undefined ? undefined : Math.min(1, Math.max(0, video.progress / 100));
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
function failureText(error: { message?: string; code?: string } | undefined): string {
  const message = error?.message?.trim() || undefined;
  const code = error?.code || undefined;
  const text = message ?? "OpenAI failed the video without saying why.";
  return code ? `${text} (${code})` : text;
}
