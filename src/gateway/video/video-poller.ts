// What moves video jobs on: a tick every `video.tickSeconds` (repeating-tick.ts) whose tick submits
// QUEUED jobs to their vendor (-> SUBMITTED), polls SUBMITTED ones when due (backoff, and the
// vendor's Retry-After), fails jobs past `video.maxJobMinutes`, and finishes succeeded ones: the
// clip streamed to a temp file (SSRF-safe for a vendor URL, through the provider for a link on its
// own origin, size-capped either way), measured with
// ffprobe, stored in the agent's storage and library, and billed once.
//
// Every job is worked by at most one operation at a time, across instances sharing the job store:
// an operation first claims its job (a lease renewed while it runs, released after), reads the job
// again under the claim and decides from that what to do; a job another instance holds is skipped,
// and one whose instance died is taken once the lease runs out. A change is written only while the
// claim is held (the store refuses it otherwise, and the operation stops). Within one instance a
// job in flight is skipped by later ticks, and ticks never overlap. At most
// `video.concurrencyPerProvider` operations run per provider across every instance: each claim
// takes one of its provider's slots in the shared store (a job past that waits for a later tick).
// Billing happens exactly once: the usage row is named and recorded on the job before it
// is written, so after a restart the job finds out whether it was, and a job cancelled while its
// clip was downloading is not billed.
import { createReadStream, createWriteStream } from "node:fs";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { VideoModelEntry } from "../../config/video-catalog-schema.js";
import { withTempDir } from "../../media/temp-dir.js";
import { probeVideoFile } from "../../media/video-probe.js";
import { isRetryableStatus } from "../../net/upstream-errors.js";
import { UpstreamHttpError, UpstreamNetworkError } from "../../providers/provider-errors.js";
import type { VideoCapability, VideoOutput, VideoRequest } from "../../providers/video-types.js";
import { periodOf } from "../../store/usage-log.js";
import {
  type JobClaim,
  TERMINAL_STATUSES,
  VideoJobClaimLostError,
  VideoJobEndedError,
  type VideoJobRecord,
  type VideoJobRecords,
} from "../../store/video-jobs.js";
import { RepeatingTick } from "../repeating-tick.js";
import type { ServiceContext } from "../service-context.js";
import { billedVideoSeconds } from "./video-request.js";
import type { VideoService } from "./video-service.js";

const OPERATION_TIMEOUT_MS = 120_000;
const DOWNLOAD_TIMEOUT_MS = 15 * 60_000;
/** Later polls of a task wait up to this many poll intervals. */
const MAX_BACKOFF_INTERVALS = 6;
/** How long a claim on a job lasts unrenewed: another instance takes the job of one that died after this. */
const CLAIM_LEASE_MS = 30_000;
const CLAIM_RENEW_MS = 10_000;

/** One operation on a job: the claim its changes are written under, and a signal that fires when the claim is lost. */
interface Work {
  claim: JobClaim;
  lost: AbortSignal;
}

export class VideoPoller {
  private readonly schedule = new RepeatingTick();
  private ticking = false;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perProvider = new Map<string, number>();
  private readonly stopping = new AbortController();

  /**
   * The job's credits are held in the ledger under its id, and its usage row is looked for in
   * the usage records: both through their interfaces, so state shared between instances fits.
   */
  constructor(
    private readonly shared: ServiceContext,
    private readonly jobs: VideoJobRecords,
    /** Ends a job (FAILED or CANCELLED) as a client's cancel does. */
    private readonly service: VideoService,
  ) {}

  /** Run the schedule (the server does; tests may call tick() themselves). */
  start(): void {
    if (this.schedule.running) return;
    const seconds = this.shared.config().video.tickSeconds;
    this.schedule.start(
      seconds,
      () => this.tick(),
      (error) => this.shared.warn(`video jobs: a tick failed: ${reason(error)}`),
    );
  }

  /** Stop scheduling and wait for the operations in flight (aborted after a grace period). */
  async stop(graceMs = 5_000): Promise<void> {
    this.schedule.stop();
    const timer = setTimeout(() => this.stopping.abort(new Error("the server is stopping")), graceMs);
    timer.unref();
    await Promise.allSettled([...this.inFlight.values()]);
    clearTimeout(timer);
  }

  /** One pass over the unfinished jobs; the operations it starts run on after it returns. */
  async tick(): Promise<void> {
    if (this.ticking || this.stopping.signal.aborted) return;
    this.ticking = true;
    try {
      const config = this.shared.config();
      const now = this.shared.now();
      for (const job of await this.jobs.active()) {
        if (this.inFlight.has(job.id)) continue;
        // What is not due is skipped here; the rest is decided again under the job's claim.
        const due = !job.nextPollAt || Date.parse(job.nextPollAt) <= now || this.overdue(job, now) || !this.shared.providers().get(job.provider)?.video;
        if (!due) continue;
        if ((this.perProvider.get(job.provider) ?? 0) >= config.video.concurrencyPerProvider) continue;
        this.launch(job);
      }
    } catch (error) {
      // The job store is down (Redis unreachable): the next tick tries again.
      this.shared.warn(`video jobs: looking for work failed: ${reason(error)}`);
    } finally {
      this.ticking = false;
    }
  }

  /** Resolves when nothing is in flight (tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  private launch(job: VideoJobRecord): void {
    this.perProvider.set(job.provider, (this.perProvider.get(job.provider) ?? 0) + 1);
    const running = this.claimed(job.id, job.provider)
      .catch((error: unknown) => {
        // Cancelled by a client meanwhile: nothing more to do.
        if (error instanceof VideoJobEndedError) return;
        if (error instanceof VideoJobClaimLostError) return this.shared.warn(`video job ${job.id}: stopped working it: ${error.message}`);
        this.shared.warn(`video job ${job.id}: ${error instanceof Error ? error.message : String(error)}`);
      })
      .finally(() => {
        this.inFlight.delete(job.id);
        this.perProvider.set(job.provider, (this.perProvider.get(job.provider) ?? 1) - 1);
      });
    this.inFlight.set(job.id, running);
  }

  /**
   * Claim the job and a slot of its provider (skip it when another instance holds it, or the
   * provider's slots are all taken), renew the claim while working, release it after.
   */
  private async claimed(id: string, provider: string): Promise<void> {
    const claim = await this.jobs.claim(id, CLAIM_LEASE_MS, { group: provider, limit: this.shared.config().video.concurrencyPerProvider });
    if (!claim) return;
    const lost = new AbortController();
    const renewal = setInterval(() => {
      claim.renew().then(
        (held) => {
          if (!held) lost.abort(new VideoJobClaimLostError(id));
        },
        (error: unknown) => this.shared.warn(`video job ${id}: renewing its claim failed: ${reason(error)}`),
      );
    }, CLAIM_RENEW_MS);
    renewal.unref();
    try {
      // Read again under the claim: another instance may have moved it on since the tick listed it.
      const job = await this.jobs.get(id);
      if (job && !TERMINAL_STATUSES.has(job.status)) await this.step(job, { claim, lost: lost.signal });
    } finally {
      clearInterval(renewal);
      await claim.release().catch((error: unknown) => this.shared.warn(`video job ${id}: releasing its claim failed: ${reason(error)}`));
    }
  }

  /** What the job needs now: failed (too old, or its provider gone), billed, submitted or polled. */
  private async step(job: VideoJobRecord, work: Work): Promise<void> {
    const now = this.shared.now();
    if (this.overdue(job, now)) {
      const minutes = this.shared.config().video.maxJobMinutes;
      return this.fail(job, work, `the job did not finish within ${minutes} ${minutes === 1 ? "minute" : "minutes"}`, true);
    }
    const video = this.shared.providers().get(job.provider)?.video;
    if (!video) return this.fail(job, work, `the provider ${job.provider} is no longer configured`);
    if (job.nextPollAt && Date.parse(job.nextPollAt) > now) return;
    // Named but not known to be written: a restart came between the two; the log says which.
    const { billing } = job;
    if (billing) return this.finishBilling(job, billing, work, { recovering: true });
    if (job.status === "QUEUED") return this.submit(job, video, work);
    return this.poll(job, video, work);
  }

  /** Past `video.maxJobMinutes` and not yet finishing. */
  private overdue(job: VideoJobRecord, now: number): boolean {
    return now - Date.parse(job.queuedAt) > this.shared.config().video.maxJobMinutes * 60_000 && !job.billing;
  }

  private async submit(job: VideoJobRecord, video: VideoCapability, work: Work): Promise<void> {
    const image = job.request.image ? await this.jobs.readImage(job.id) : undefined;
    if (job.request.image && !image) return this.fail(job, work, "the reference photo of this job is gone");
    const { prompt, durationSeconds, resolution, ratio, width, height } = job.request;
    const request: VideoRequest = { model: job.vendorModel, prompt, durationSeconds, resolution, ratio, width, height };
    if (image && job.request.image) request.image = { bytes: image, ...job.request.image };
    let taskId: string;
    try {
      ({ taskId } = await video.submit(request, { signal: this.operationSignal(OPERATION_TIMEOUT_MS, work) }));
    } catch (error) {
      if (transient(error)) return this.later(job, work, error);
      return this.fail(job, work, `${job.provider} refused the job: ${reason(error)}`);
    }
    const now = this.shared.now();
    try {
      await this.jobs.update(
        job.id,
        {
          status: "SUBMITTED",
          taskId,
          startedAt: job.startedAt ?? new Date(now).toISOString(),
          polls: 0,
          nextPollAt: new Date(now + this.pollIntervalMs()).toISOString(),
        },
        work.claim,
      );
    } catch (error) {
      // Cancelled while it was being submitted, or the claim ran out: the task is recorded nowhere, so it goes too.
      await video.cancel?.(taskId, { signal: AbortSignal.timeout(OPERATION_TIMEOUT_MS) }).catch(() => undefined);
      throw error;
    }
  }

  private async poll(job: VideoJobRecord, video: VideoCapability, work: Work): Promise<void> {
    let state: Awaited<ReturnType<VideoCapability["poll"]>>;
    try {
      state = await video.poll(taskIdOf(job), { signal: this.operationSignal(OPERATION_TIMEOUT_MS, work) });
    } catch (error) {
      if (transient(error)) return this.later(job, work, error);
      return this.fail(job, work, `${job.provider} could not report on the job: ${reason(error)}`);
    }
    if ((await this.jobs.get(job.id))?.status !== "SUBMITTED") return;
    switch (state.state) {
      case "queued":
      case "running": {
        const polls = job.polls + 1;
        const wait = state.retryAfterMs ?? this.pollIntervalMs() * Math.min(MAX_BACKOFF_INTERVALS, 1 + Math.floor(polls / 5));
        await this.jobs.update(
          job.id,
          {
            polls,
            progress: state.progress,
            nextPollAt: new Date(this.shared.now() + wait).toISOString(),
          },
          work.claim,
        );
        return;
      }
      case "succeeded":
        return this.finish(job, video, work, state.output);
      case "failed":
        return this.fail(job, work, `${job.provider} failed the job: ${state.error}`);
      case "cancelled":
        return this.fail(
          job,
          work,
          state.error ? `${job.provider} cancelled the job: ${state.error}` : `${job.provider} cancelled the job`,
          false,
          "CANCELLED",
        );
      case "lost":
        if (video.resubmitsLostTasks) {
          await this.jobs.update(job.id, { status: "QUEUED", taskId: undefined, nextPollAt: undefined, progress: undefined }, work.claim);
          return;
        }
        return this.fail(job, work, `${job.provider} no longer knows the job's task`);
    }
  }

  /** The clip to a temp file, measured, stored, then billed; a job cancelled meanwhile is neither stored nor billed. */
  private async finish(job: VideoJobRecord, video: VideoCapability, work: Work, output: VideoOutput): Promise<void> {
    const config = this.shared.config();
    const maxBytes = config.video.maxClipBytes;
    await withTempDir(async (directory) => {
      const file = path.join(directory, "clip.mp4");
      try {
        await this.download(job, video, work, output, file, maxBytes);
      } catch (error) {
        if (work.lost.aborted) throw work.lost.reason;
        if (transient(error)) return this.later(job, work, error);
        return this.fail(job, work, `the clip could not be downloaded from ${job.provider}: ${reason(error)}`);
      }
      let seconds: number;
      try {
        seconds = (await probeVideoFile(file, { signal: this.operationSignal(OPERATION_TIMEOUT_MS, work) })).durationSeconds;
      } catch (error) {
        if (work.lost.aborted) throw work.lost.reason;
        return this.fail(job, work, `the clip ${job.provider} made cannot be read: ${reason(error)}`);
      }
      if ((await this.jobs.get(job.id))?.status !== "SUBMITTED") return;
      let fileId: string;
      try {
        const stored = await this.shared.storage.storeStream(job.agentId, this.shared.plans.ofAgent(job.agentId), {
          filename: `video-${job.id}.mp4`,
          contentType: "video/mp4",
          body: createReadStream(file),
          image: { projectId: job.projectId, model: job.model, prompt: job.request.prompt },
        });
        fileId = stored.id;
      } catch (error) {
        return this.fail(job, work, `the clip could not be stored in your storage: ${reason(error)}`);
      }
      const model = config.catalog.video.find((entry) => entry.id === job.model);
      const billed = billedVideoSeconds(seconds);
      const credits = billed * priceOf(model, job);
      const expiresAt = new Date(this.shared.now() + config.video.resultTtlHours * 3_600_000).toISOString();
      const billing = { rowId: crypto.randomUUID(), credits, seconds: billed, written: false };
      let ready: VideoJobRecord;
      try {
        // Refused when the job was cancelled meanwhile (it ended) or the claim ran out: the clip is not kept.
        ready = await this.jobs.update(job.id, { billing, result: { fileId, expiresAt, durationSeconds: Math.round(seconds * 1000) / 1000 } }, work.claim);
      } catch (error) {
        await this.shared.storage.remove(job.agentId, this.shared.plans.ofAgent(job.agentId), fileId).catch(() => undefined);
        throw error;
      }
      await this.finishBilling(ready, billing, work, { recovering: false });
    });
  }

  /**
   * Write the job's usage row unless it already was, then mark it SUCCEEDED. Only a job recovered
   * after a restart reads the usage log to find out; a job finishing now knows it was not.
   */
  private async finishBilling(
    job: VideoJobRecord,
    billing: NonNullable<VideoJobRecord["billing"]>,
    work: Work,
    options: { recovering: boolean },
  ): Promise<void> {
    const { ledger } = this.shared;
    if (!billing.written && !(options.recovering && (await this.rowWritten(billing.rowId)))) {
      // The job's estimate is what it held: the most it is billed.
      const reservation = await ledger.keptOrHeld(job.id, job.agentId, job.estimateCredits, job.keyPrefix);
      await ledger.settle(
        reservation,
        {
          agent: job.agentId,
          keyPrefix: job.keyPrefix,
          endpoint: "video.generations",
          model: job.model,
          provider: job.provider,
          units: { seconds: billing.seconds },
          credits: billing.credits,
          requestId: job.id,
          ...(job.tags ? { tags: job.tags } : {}),
        },
        { rowId: billing.rowId },
      );
    }
    await ledger.releaseKept(job.id);
    await this.jobs.update(
      job.id,
      {
        status: "SUCCEEDED",
        finishedAt: new Date(this.shared.now()).toISOString(),
        billing: { ...billing, written: true },
        nextPollAt: undefined,
        progress: undefined,
      },
      work.claim,
    );
  }

  private async download(job: VideoJobRecord, video: VideoCapability, work: Work, output: VideoOutput, file: string, maxBytes: number): Promise<void> {
    const signal = this.operationSignal(DOWNLOAD_TIMEOUT_MS, work);
    if (output.kind === "url") {
      await this.shared.fetchUrl(output.url, {
        maxBytes,
        timeoutMs: DOWNLOAD_TIMEOUT_MS,
        accept: "video/*",
        signal,
        sink: createWriteStream(file, { mode: 0o600 }),
      });
      return;
    }
    if (!video.download) throw new Error(`${job.provider} gives no way to download the clip`);
    const { body } = await video.download(taskIdOf(job), { signal, maxBytes, ...(output.url !== undefined ? { url: output.url } : {}) });
    let total = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        total += chunk.length;
        done(total > maxBytes ? new Error(`the clip is larger than the ${maxBytes}-byte limit`) : null, chunk);
      },
    });
    await pipeline(body, cap, createWriteStream(file, { mode: 0o600 }), { signal });
  }

  /** A passing problem (a retryable vendor status: 5xx, 429, 408, 409; a network failure): try again after the poll interval. */
  private async later(job: VideoJobRecord, work: Work, error: unknown): Promise<void> {
    this.shared.warn(`video job ${job.id}: ${job.provider} failed for now, trying again: ${reason(error)}`);
    const retryAfter = error instanceof UpstreamHttpError ? error.retryAfterMs : undefined;
    await this.jobs.update(job.id, { nextPollAt: new Date(this.shared.now() + (retryAfter ?? this.pollIntervalMs())).toISOString() }, work.claim);
  }

  private async fail(job: VideoJobRecord, work: Work, error: string, cancelTask = false, status: "FAILED" | "CANCELLED" = "FAILED"): Promise<void> {
    const current = await this.jobs.get(job.id);
    if (!current || TERMINAL_STATUSES.has(current.status)) return;
    await this.service.end(current, status, error, { claim: work.claim });
    const video = this.shared.providers().get(job.provider)?.video;
    if (cancelTask && current.taskId && video?.cancel)
      video.cancel(current.taskId, { signal: this.operationSignal(OPERATION_TIMEOUT_MS) }).catch(() => undefined);
  }

  private rowWritten(rowId: string): Promise<boolean> {
    const now = new Date(this.shared.now());
    const previous = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15));
    return this.shared.ledger.rowWritten(rowId, [periodOf(now), periodOf(previous)]);
  }

  private pollIntervalMs(): number {
    return this.shared.config().video.pollIntervalSeconds * 1000;
  }

  /** Ends at the timeout, when the server stops, or when the operation's claim is lost. */
  private operationSignal(timeoutMs: number, work?: Work): AbortSignal {
    return AbortSignal.any([AbortSignal.timeout(timeoutMs), this.stopping.signal, ...(work ? [work.lost] : [])]);
  }
}

function priceOf(model: VideoModelEntry | undefined, job: VideoJobRecord): number {
  if (model) return model.pricing.perSecond[job.request.resolution] ?? 0;
  // The model left the catalog while the job ran: the price it was queued at.
  return Math.round(job.estimateCredits / job.request.durationSeconds);
}

function transient(error: unknown): boolean {
  if (error instanceof UpstreamHttpError) return isRetryableStatus(error.status);
  return error instanceof UpstreamNetworkError;
}

/** A SUBMITTED job's vendor task. */
function taskIdOf(job: VideoJobRecord): string {
  if (job.taskId === undefined) throw new Error(`the job has no ${job.provider} task`);
  return job.taskId;
}

function reason(error: unknown): string {
  if (error instanceof UpstreamHttpError) {
    try {
      const parsed = JSON.parse(error.body) as { error?: { message?: unknown } };
      if (typeof parsed.error?.message === "string") return parsed.error.message;
    } catch {
      // not JSON
    }
    return `HTTP ${error.status}`;
  }
  return error instanceof Error ? error.message : String(error);
}
