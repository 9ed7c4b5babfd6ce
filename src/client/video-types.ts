// Shapes of the video endpoints as the client sends and reads them (POST /v1/video/generations,
// GET|DELETE /v1/video/jobs/{id}, GET /v1/video/jobs, GET /v1/public/video-models), derived from
// the gateway's request schema (`z.input`) and answer types (type imports only: erased, so the
// client never loads the gateway; docs/decisions.md §1). A server change the client does not
// follow fails tsc.
import type { z } from "zod";
import type { PublicVideoModel, publicVideoCatalog } from "../gateway/video/video-models.js";
import type { videoGenerationSchema } from "../gateway/video/video-request.js";
import type { VideoJobBody as ServerVideoJobBody } from "../gateway/video/video-service.js";

/** POST /v1/video/generations: the prompt, and what the model's catalog entry allows. */
export type VideoGenerationRequest = z.input<typeof videoGenerationSchema>;

/** A job as GET /v1/video/jobs/{id} answers it (the 202 of a submission carries id, status, model and queuedAt). */
export type VideoJobBody = ServerVideoJobBody;

export type VideoJobStatus = VideoJobBody["status"];

// Values, so kept here rather than imported (the client never loads the gateway); the
// `satisfies` checks keep them within the server's types.
export const VIDEO_JOB_STATUSES = ["QUEUED", "SUBMITTED", "SUCCEEDED", "FAILED", "CANCELLED"] as const satisfies readonly VideoJobStatus[];
export const FINISHED_VIDEO_STATUSES: ReadonlySet<VideoJobStatus> = new Set(["SUCCEEDED", "FAILED", "CANCELLED"] as const satisfies readonly VideoJobStatus[]);

/** GET /v1/video/jobs: the caller's recent jobs, newest first. */
export interface VideoJobListBody {
  data: VideoJobBody[];
}

/** One model of GET /v1/public/video-models. */
export type VideoCatalogModel = PublicVideoModel;

/** GET /v1/public/video-models. */
export type VideoCatalogBody = ReturnType<typeof publicVideoCatalog>;

/** The clip behind a job's signed result link, as it streams. */
export interface VideoClipDownload {
  contentType: string;
  sizeBytes: number | undefined;
  body: ReadableStream<Uint8Array>;
}
