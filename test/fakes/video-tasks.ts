/**
 * What the fake video vendors (runway.ts, openai-video.ts) share: scripted tasks. Each submitted
 * task takes a script (the next one enqueued, else the one set, else the fake's start options)
 * that says how its polls go; the fakes translate the phases into their own wire format.
 *
 * A task's polls, counting only the polls answered with a state (rate-limited or errored polls
 * do not count): the first `queuedPolls` (default 1) answer queued, the next ones running with a
 * rising progress, and the poll after `succeedAfterPolls` (default 2) of them answers succeeded,
 * so by default: queued, running (50 %), succeeded. `fail` finishes the same way with a failure,
 * `slow` never finishes, `vanish` answers 404 after that many polls. A finished task keeps
 * answering its final state. DELETE is recorded in `cancels`; what it does is the vendor's.
 */
import type http from "node:http";
import type { CommonBehaviour, FakeServer } from "./audio-fake-server.js";

export interface VideoTaskScript {
  /** Polls answered queued before the task runs (default 1; never past the finishing poll). */
  queuedPolls?: number;
  /** Polls answered queued or running before the task succeeds (default 2: the 3rd poll succeeds). */
  succeedAfterPolls?: number;
  /** Fail instead of succeeding: the reason, or the reason, the vendor's code and when (default: as succeedAfterPolls). */
  fail?: string | { reason?: string; code?: string; afterPolls?: number };
  /** Never finish: running forever, progress creeping towards 95 %. */
  slow?: boolean;
  /** The vendor forgets the task: 404 after this many polls (`0`: from the first poll). */
  vanish?: number | { afterPolls: number };
  /** The task's first `count` polls answer 429, with `Retry-After: retryAfterSeconds` when given. */
  rateLimitOnPoll?: { count: number; retryAfterSeconds?: number };
  /** The task's first `count` (default: every) polls answer this error status and body (default: the vendor's error for the status). */
  pollError?: { status: number; body?: unknown; count?: number };
  /** The submit is refused with this status and body (default: the vendor's error for the status); no task is made. */
  rejectSubmit?: { status: number; body?: unknown; retryAfterSeconds?: number };
  /** Runway: the queued polls answer THROTTLED instead of PENDING. */
  throttled?: boolean;
  /** Runway: SUCCEEDED without an `output` list. */
  noOutput?: boolean;
  /** The clip's Content-Type (default video/mp4). */
  clipContentType?: string;
  /** Send the clip in two halves this far apart (to see a reader stream it). */
  clipChunkDelayMs?: number;
}

export type TaskPhase =
  | { kind: "queued" }
  | { kind: "running"; progress: number }
  | { kind: "succeeded" }
  | { kind: "failed"; reason: string; code?: string }
  | { kind: "cancelled" };

export type PollOutcome =
  | { kind: "unknown" }
  | { kind: "rateLimited"; retryAfterSeconds?: number }
  | { kind: "error"; status: number; body?: unknown }
  | { kind: "phase"; phase: TaskPhase };

export interface FakeVideoTask {
  id: string;
  script: VideoTaskScript;
  /** The submit's JSON body. */
  json: any;
  durationSeconds: number;
  createdAt: Date;
  /** Polls answered with a state. */
  polls: number;
  rateLimitedPolls: number;
  erroredPolls: number;
  cancelled: boolean;
  /** Gone: deleted, or vanished; polls answer 404. */
  deleted: boolean;
  /** The final state once a poll answered it. */
  finished?: TaskPhase;
}

export interface FakeVideoVendor<Recorded> {
  /** The base URL to configure the provider with. */
  url: string;
  /** Every request, clip downloads included, in order. */
  requests: Recorded[];
  tasks: Map<string, FakeVideoTask>;
  /** Task ids of every DELETE that found its task, in order. */
  cancels: string[];
  /** The script of every later task (replaces the previous one). */
  set(script: VideoTaskScript): void;
  /** Scripts for the next submitted tasks, consumed in order (then the one set applies again). */
  enqueue(...scripts: VideoTaskScript[]): void;
  /** Clears requests, tasks, cancels, queued scripts, and the set script (back to the start options). */
  reset(): void;
  /** Per-request switches (wait before answering, drop the connection), the shared fake server's set/enqueue. */
  connection: Pick<FakeServer<CommonBehaviour, Recorded>, "set" | "enqueue">;
  close(): Promise<void>;
}

const DEFAULT_SUCCEED_AFTER = 2;
const DEFAULT_FAILURE = "The fake vendor failed the task.";

export class VideoTasks {
  readonly tasks = new Map<string, FakeVideoTask>();
  readonly cancels: string[] = [];
  private readonly queue: VideoTaskScript[] = [];
  private persistent: VideoTaskScript;

  constructor(private readonly initial: VideoTaskScript) {
    this.persistent = { ...initial };
  }

  set(script: VideoTaskScript): void {
    this.persistent = { ...script };
  }

  enqueue(...scripts: VideoTaskScript[]): void {
    this.queue.push(...scripts);
  }

  reset(): void {
    this.tasks.clear();
    this.cancels.length = 0;
    this.queue.length = 0;
    this.persistent = { ...this.initial };
  }

  /** The script for the submit being answered (consumes an enqueued one). */
  nextScript(): VideoTaskScript {
    return this.queue.shift() ?? this.persistent;
  }

  create(id: string, script: VideoTaskScript, json: unknown, durationSeconds: number): FakeVideoTask {
    const task: FakeVideoTask = {
      id,
      script,
      json,
      durationSeconds,
      createdAt: new Date(),
      polls: 0,
      rateLimitedPolls: 0,
      erroredPolls: 0,
      cancelled: false,
      deleted: false,
    };
    this.tasks.set(id, task);
    return task;
  }

  /** A live task (not deleted, not vanished). */
  find(id: string): FakeVideoTask | undefined {
    const task = this.tasks.get(id);
    return task && !task.deleted ? task : undefined;
  }

  /** One poll of task `id`: what it answers, the task's counters advanced. */
  poll(id: string): PollOutcome {
    const task = this.find(id);
    if (!task) return { kind: "unknown" };
    const { script } = task;
    if (script.rateLimitOnPoll && task.rateLimitedPolls < script.rateLimitOnPoll.count) {
      task.rateLimitedPolls += 1;
      return { kind: "rateLimited", retryAfterSeconds: script.rateLimitOnPoll.retryAfterSeconds };
    }
    if (script.pollError && task.erroredPolls < (script.pollError.count ?? Number.POSITIVE_INFINITY)) {
      task.erroredPolls += 1;
      return { kind: "error", status: script.pollError.status, body: script.pollError.body };
    }
    const vanishAfter = typeof script.vanish === "number" ? script.vanish : script.vanish?.afterPolls;
    if (vanishAfter !== undefined && task.polls >= vanishAfter) {
      task.deleted = true;
      return { kind: "unknown" };
    }
    task.polls += 1;
    if (task.finished) return { kind: "phase", phase: task.finished };
    if (task.cancelled) return { kind: "phase", phase: this.finish(task, { kind: "cancelled" }) };
    return { kind: "phase", phase: this.phaseOf(task) };
  }

  /** DELETE: recorded when the task is known; the vendor decides what it does to the task. */
  cancel(id: string): FakeVideoTask | undefined {
    const task = this.find(id);
    if (task) this.cancels.push(id);
    return task;
  }

  private phaseOf(task: FakeVideoTask): TaskPhase {
    const { script } = task;
    const fail = typeof script.fail === "string" ? { reason: script.fail } : script.fail;
    const finishAfter = script.slow ? Number.POSITIVE_INFINITY : (fail?.afterPolls ?? script.succeedAfterPolls ?? DEFAULT_SUCCEED_AFTER);
    const queued = Math.min(script.queuedPolls ?? 1, finishAfter);
    if (task.polls > finishAfter) {
      if (!fail) return this.finish(task, { kind: "succeeded" });
      const failed: TaskPhase = { kind: "failed", reason: fail.reason ?? DEFAULT_FAILURE };
      if (fail.code !== undefined) failed.code = fail.code;
      return this.finish(task, failed);
    }
    if (task.polls <= queued) return { kind: "queued" };
    const step = task.polls - queued;
    const progress = script.slow ? Math.min(0.95, 1 - 1 / (step + 1)) : step / (finishAfter - queued + 1);
    return { kind: "running", progress: Math.round(progress * 100) / 100 };
  }

  private finish(task: FakeVideoTask, phase: TaskPhase): TaskPhase {
    task.finished = phase;
    return phase;
  }
}

/** The clip with its length, in two halves `chunkDelayMs` apart when asked. */
export async function sendClip(response: http.ServerResponse, clip: Buffer, contentType: string, chunkDelayMs?: number): Promise<void> {
  response.writeHead(200, { "content-type": contentType, "content-length": String(clip.length) });
  if (!chunkDelayMs) {
    response.end(clip);
    return;
  }
  const half = Math.floor(clip.length / 2);
  response.write(clip.subarray(0, half));
  await new Promise((resolve) => setTimeout(resolve, chunkDelayMs));
  if (!response.destroyed) response.end(clip.subarray(half));
}

/** The Bearer token of a request, or undefined. */
export function bearerOf(request: http.IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? "");
  return match?.[1];
}
