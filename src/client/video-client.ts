// The video endpoints for the client, on GwClient's transport; `client.video` is one built with
// the client's key. A generation is a job: submit answers 202 with the queued job, which is then
// polled (waitForJob) until it ends; a succeeded job's `resultUrl` is a signed link that needs no
// key, streamed by downloadClip.

import { setTimeout as pause } from "node:timers/promises";
import { type AnswerShape, answerShape, hasList, hasString } from "./answer-shape.js";
import { errorFromBody, GwApiError, networkReason } from "./gw-api-error.js";
import type { HttpTransport } from "./http-transport.js";
import {
  FINISHED_VIDEO_STATUSES,
  type VideoCatalogBody,
  type VideoClipDownload,
  type VideoGenerationRequest,
  type VideoJobBody,
  type VideoJobListBody,
} from "./video-types.js";

export interface VideoCallOptions {
  signal?: AbortSignal;
}

export interface WaitOptions extends VideoCallOptions {
  /** Seconds between polls [default: 2]. */
  intervalSeconds?: number;
  /** Every poll's answer, the last (finished) one included. */
  onUpdate?: (job: VideoJobBody) => void;
  /** A poll that failed in a way worth retrying (gateway unreachable, 429, 5xx), and the wait before the next. */
  onRetry?: (error: GwApiError, delaySeconds: number) => void;
}

/** Polls that may fail in a row (unreachable gateway, 429, 5xx) before waiting gives up. */
export const MAX_POLL_RETRIES = 6;
const MAX_RETRY_DELAY_SECONDS = 30;
const JOBS_PATH = "/v1/video/jobs";
const JOB_LIST = answerShape("video job list", (body): body is VideoJobListBody => hasList(body, "data"));
const VIDEO_CATALOG = answerShape("video catalog", (body): body is VideoCatalogBody => hasList(body, "models"));

export function isFinishedJob(job: Pick<VideoJobBody, "status">): boolean {
  return FINISHED_VIDEO_STATUSES.has(job.status);
}

export class VideoClient {
  /** `fetch` for the signed result links, which are absolute and outside the transport's base URL. */
  constructor(
    private readonly transport: HttpTransport,
    private readonly options: { fetch?: typeof fetch } = {},
  ) {}

  /** POST /v1/video/generations: the queued job (id, status, model, queuedAt). */
  async generate(body: VideoGenerationRequest, options: VideoCallOptions = {}): Promise<VideoJobBody> {
    return this.transport.json("/v1/video/generations", jobShape("video generation"), { json: body, signal: options.signal });
  }

  /** GET /v1/video/jobs/{id}. */
  async job(id: string, options: VideoCallOptions = {}): Promise<VideoJobBody> {
    return this.transport.json(jobPath(id), jobShape("video job"), { signal: options.signal });
  }

  /** DELETE /v1/video/jobs/{id}: the cancelled job; a finished one is refused (409 video_job_finished). */
  async cancel(id: string, options: VideoCallOptions = {}): Promise<VideoJobBody> {
    return this.transport.json(jobPath(id), jobShape("video cancel"), { method: "DELETE", signal: options.signal });
  }

  /** GET /v1/video/jobs: the caller's recent jobs, newest first (limit 1 to 100, default 20). */
  async list(query: { limit?: number } = {}, options: VideoCallOptions = {}): Promise<VideoJobListBody> {
    return this.transport.json(JOBS_PATH, JOB_LIST, { signal: options.signal, query: { limit: query.limit } });
  }

  /** GET /v1/public/video-models (no key needed). */
  async videoCatalog(options: VideoCallOptions = {}): Promise<VideoCatalogBody> {
    return this.transport.json("/v1/public/video-models", VIDEO_CATALOG, { signal: options.signal, auth: false });
  }

  /**
   * Poll the job every `intervalSeconds` until it is SUCCEEDED, FAILED or CANCELLED, and answer
   * that last state. Polls that fail for a passing reason (the gateway unreachable or restarting,
   * 429, 5xx) are retried with a growing wait (Retry-After when the gateway says one), up to
   * MAX_POLL_RETRIES in a row; anything else (404 ...) is thrown. `signal` stops waiting (the
   * job goes on).
   */
  async waitForJob(id: string, options: WaitOptions = {}): Promise<VideoJobBody> {
    const interval = options.intervalSeconds ?? 2;
    let failures = 0;
    for (;;) {
      let job: VideoJobBody;
      try {
        job = await this.job(id, { signal: options.signal });
        failures = 0;
      } catch (error) {
        if (options.signal?.aborted || !(error instanceof GwApiError) || !isPassing(error) || failures >= MAX_POLL_RETRIES) throw error;
        failures += 1;
        const delay = error.retryAfterSeconds ?? Math.min(MAX_RETRY_DELAY_SECONDS, interval * 2 ** failures);
        options.onRetry?.(error, delay);
        await sleep(delay * 1000, options.signal);
        continue;
      }
      options.onUpdate?.(job);
      if (isFinishedJob(job)) return job;
      await sleep(interval * 1000, options.signal);
    }
  }

  /** Stream the clip of a succeeded job from its signed link (no key: the link is the credential). */
  async downloadClip(job: Pick<VideoJobBody, "id" | "status" | "resultUrl" | "error">, options: VideoCallOptions = {}): Promise<VideoClipDownload> {
    if (job.status !== "SUCCEEDED") throw new GwApiError(`the video job ${job.id} is ${job.status}; only a succeeded job has a clip`, 0);
    if (!job.resultUrl) throw new GwApiError(`the video job ${job.id} has no clip to download${job.error ? `: ${job.error}` : ""}`, 0);
    const fetchImpl = this.options.fetch ?? fetch;
    let response: Response;
    try {
      response = await fetchImpl(job.resultUrl, { signal: options.signal });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new GwApiError(`cannot download the clip from ${new URL(job.resultUrl).origin} (${networkReason(error)})`, 0);
    }
    const requestId = response.headers.get("x-request-id") ?? undefined;
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: the status and what was sent.
      }
      const cause = errorFromBody(body, response.status, requestId);
      throw new GwApiError(
        `cannot download the clip of ${job.id}: ${cause?.message ?? `HTTP ${response.status}${text.trim() ? `: ${text.trim().slice(0, 200)}` : ""}`}`,
        response.status,
        cause?.type,
        cause?.code,
        requestId,
        body,
      );
    }
    if (!response.body) throw new GwApiError(`the gateway sent no clip for ${job.id}`, response.status, undefined, undefined, requestId);
    const length = response.headers.get("content-length");
    return {
      contentType: response.headers.get("content-type") ?? "application/octet-stream",
      sizeBytes: length === null ? undefined : Number(length),
      body: response.body,
    };
  }
}

function jobPath(id: string): string {
  return `${JOBS_PATH}/${encodeURIComponent(id)}`;
}

function jobShape(what: string): AnswerShape<VideoJobBody> {
  return answerShape(what, (body): body is VideoJobBody => hasString(body, "id") && hasString(body, "status"));
}

/** Worth polling again: the gateway unreachable (a restart), rate limited, or failing for now. */
function isPassing(error: GwApiError): boolean {
  // Status 0 is also a client-side refusal (no key ...): only the transport's "cannot reach" passes.
  if (error.status === 0) return error.message.startsWith("cannot reach");
  return error.status === 429 || error.status >= 500;
}

/** Wait; an abort rejects with the signal's own reason, as the poll it interrupts does (not timers' AbortError). */
async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await pause(ms, undefined, { signal });
  } catch (error) {
    throw signal?.aborted ? signal.reason : error;
  }
}
