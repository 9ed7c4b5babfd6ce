// Video jobs without HTTP: submit (checked against the model's catalog entry, the reference photo
// fetched and checked, the estimated cost reserved: 402 before anything is queued; nothing is
// billed), read one (another agent's job answers like a missing one), list an agent's recent jobs,
// and cancel one that is not finished (409 on a finished one). The poller (video-poller.ts) moves
// jobs on; billing happens there, once, on success.

import { type JobClaim, newVideoJobId, TERMINAL_STATUSES, type VideoJobRecord, type VideoJobRecords } from "../../store/video-jobs.js";
import { assertKeyAllowsModel } from "../auth/key-limits.js";
import { VideoJobConflictError, VideoJobNotFoundError } from "../errors.js";
import { readPicture } from "../media/picture-input.js";
import { modelsView, type ServiceContext } from "../service-context.js";
import type { ToolCallContext } from "../upstream-calls/tool-provider-call.js";
import { chooseVideoModel } from "./video-models.js";
import { checkAgainstModel, estimateVideoCredits, type VideoGenerationBody } from "./video-request.js";

export interface VideoJobBody {
  id: string;
  status: VideoJobRecord["status"];
  model: string;
  queuedAt: string;
  startedAt?: string;
  finishedAt?: string;
  resultUrl?: string;
  resultExpiresAt?: string;
  error?: string;
  /** 0 to 1, while the vendor reports it. */
  progress?: number;
}

export class VideoService {
  /** A running job's credits are held in the ledger under the job's id until the job ends. */
  constructor(
    private readonly shared: ServiceContext,
    private readonly jobs: VideoJobRecords,
  ) {}

  /** Jobs that were running before a restart hold their estimate again (once: a shared ledger may still hold it). */
  async restoreHolds(): Promise<void> {
    for (const job of await this.jobs.active()) await this.shared.ledger.keptOrHeld(job.id, job.agentId, job.estimateCredits, job.keyPrefix);
  }

  async submit(body: VideoGenerationBody, context: ToolCallContext): Promise<VideoJobBody> {
    const { ledger } = this.shared;
    const model = chooseVideoModel(modelsView(this.shared), body.model, context);
    assertKeyAllowsModel(context.caller.key, model.id);
    const plan = checkAgainstModel(model, body);
    const estimate = estimateVideoCredits(model, plan);
    // 402 before the picture is fetched; the reservation below still decides.
    await ledger.requireAvailable(context, estimate);
    const picture = body.image_url ? await readPicture(body.image_url, { fetch: this.shared.fetchUrl, param: "image_url", signal: context.signal }) : undefined;
    const lineage = await this.shared.library.lineage(context.caller.agent.id, { projectId: body.project_id });
    const reservation = await ledger.reserve(context, estimate);
    const job: VideoJobRecord = {
      id: newVideoJobId(),
      agentId: context.caller.agent.id,
      keyPrefix: context.caller.key.prefix,
      model: model.id,
      provider: model.provider,
      vendorModel: model.model,
      status: "QUEUED",
      queuedAt: new Date(this.shared.now()).toISOString(),
      request: { prompt: body.prompt, ...plan, ...(picture ? { image: { mediaType: picture.mediaType, width: picture.width, height: picture.height } } : {}) },
      projectId: lineage.projectId,
      estimateCredits: estimate,
      polls: 0,
    };
    if (context.tags) job.tags = context.tags;
    try {
      await this.jobs.create(job, picture?.bytes);
    } catch (error) {
      ledger.release(reservation);
      throw error;
    }
    await ledger.keep(job.id, reservation);
    return { id: job.id, status: job.status, model: job.model, queuedAt: job.queuedAt };
  }

  /** The caller's job; another agent's, or none, is 404. */
  async get(agentId: string, id: string, baseUrl: string): Promise<VideoJobBody> {
    return this.body(await this.own(agentId, id), baseUrl);
  }

  async list(agentId: string, limit: number, baseUrl: string): Promise<VideoJobBody[]> {
    return Promise.all((await this.jobs.list(agentId, limit)).map((job) => this.body(job, baseUrl)));
  }

  /** Cancel a job that has not finished: CANCELLED, nothing billed, the vendor task cancelled where it can be. */
  async cancel(agentId: string, id: string, baseUrl: string): Promise<VideoJobBody> {
    const job = await this.own(agentId, id);
    assertCancellable(job);
    // Checked again on the record the cancel is written over: a poller elsewhere may have moved it on.
    const cancelled = await this.end(job, "CANCELLED", "cancelled by client", { check: assertCancellable });
    const video = this.shared.providers().get(job.provider)?.video;
    if (job.taskId && video?.cancel) {
      const taskId = job.taskId;
      video.cancel(taskId, { signal: AbortSignal.timeout(30_000) }).catch((error: unknown) => {
        this.shared.warn(
          `video job ${id}: the ${job.provider} task ${taskId} could not be cancelled: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
    }
    return this.body(cancelled, baseUrl);
  }

  /**
   * Make a job terminal (FAILED or CANCELLED) and give its held credits back. The poller ends a
   * job under its claim (not written once the claim is lost); a client's cancel needs none.
   */
  async end(
    job: VideoJobRecord,
    status: "FAILED" | "CANCELLED",
    error: string,
    options: { claim?: JobClaim; check?: (current: VideoJobRecord) => void } = {},
  ): Promise<VideoJobRecord> {
    const ended = await this.jobs.update(
      job.id,
      {
        status,
        error,
        finishedAt: new Date(this.shared.now()).toISOString(),
        nextPollAt: undefined,
        progress: undefined,
      },
      options.claim,
      options.check,
    );
    await this.shared.ledger.releaseKept(job.id);
    return ended;
  }

  private async own(agentId: string, id: string): Promise<VideoJobRecord> {
    const job = await this.jobs.get(id);
    if (!job || job.agentId !== agentId) throw new VideoJobNotFoundError(id);
    return job;
  }

  /** The job as a poll answers it. The link is signed for the job's fixed expiry: every poll gets the same one, expired or not (docs/decisions.md §8). */
  private async body(job: VideoJobRecord, baseUrl: string): Promise<VideoJobBody> {
    const body: VideoJobBody = { id: job.id, status: job.status, model: job.model, queuedAt: job.queuedAt };
    if (job.startedAt) body.startedAt = job.startedAt;
    if (job.finishedAt) body.finishedAt = job.finishedAt;
    if (job.status === "SUBMITTED" && job.progress !== undefined) body.progress = job.progress;
    if (job.status === "SUCCEEDED" && job.result) {
      const expires = Math.floor(Date.parse(job.result.expiresAt) / 1000);
      try {
        body.resultUrl = (await this.shared.storage.downloadLink(job.agentId, job.result.fileId, baseUrl, expires)).url;
        body.resultExpiresAt = job.result.expiresAt;
      } catch {
        // The clip was deleted from the agent's storage: the job stays SUCCEEDED, without a link.
        body.error = "the clip has been deleted from your storage";
      }
    }
    if ((job.status === "FAILED" || job.status === "CANCELLED") && job.error) body.error = job.error;
    return body;
  }
}

/** Only a queued or running job whose clip is not being stored can be cancelled. */
function assertCancellable(job: VideoJobRecord): void {
  if (TERMINAL_STATUSES.has(job.status))
    throw new VideoJobConflictError(`The video job ${job.id} has already finished (${job.status}); only a queued or running job can be cancelled.`);
  if (job.billing) throw new VideoJobConflictError(`The video job ${job.id} is finishing (its clip is being stored); it can no longer be cancelled.`);
}
