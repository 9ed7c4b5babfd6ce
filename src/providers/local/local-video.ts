// The `local` provider's video: model `kenburns`, a pan and zoom over the reference photo rendered
// by ffmpeg on this machine (src/media/kenburns.ts). Tasks live in this process only: submit
// registers one and renders it in the background, at most `concurrency()` at a time (the others
// wait `queued`, in order), each into a private temp directory the task owns. A restart forgets
// them, so an unknown id is `lost` and the gateway submits again (resubmitsLostTasks).
//
// States: `queued` (waiting for a render slot), `running` (progress 0..1 from ffmpeg's frame
// count), `succeeded` (output `provider`: download streams the mp4), `failed` (the engine's own
// message, never a path), `cancelled` (cancel kills ffmpeg or drops the queued task and removes
// its files at once; the id answers `cancelled`, not `lost`, so a cancelled job is never
// submitted again). A downloaded clip is removed, and the task forgotten, as soon as its stream
// closes (read to the end, failed or destroyed). Finished tasks never downloaded are removed an
// hour after they finished.
import { randomBytes } from "node:crypto";
import { createReadStream, type ReadStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { AudioEngineError, locateEngine } from "../../media/audio-process.js";
import type { EngineInfo } from "../../media/engines.js";
import { renderKenBurns } from "../../media/kenburns.js";
import { createRunSlots } from "../../media/run-slots.js";
import { UnsupportedContentError } from "../provider-errors.js";
import type { VideoCapability, VideoRequest, VideoTaskState } from "../video-types.js";

export const LOCAL_VIDEO_MODEL = "kenburns";

/** How long a finished task waits for its download before its files are removed. */
export const LOCAL_VIDEO_TASK_TTL_MS = 60 * 60 * 1000;

export interface LocalVideoOptions {
  /** Renders at once (the config's `video.localConcurrency`); read at each submit, default 1. */
  concurrency?: () => number;
  /** Where ffmpeg is (default: found like findFfmpeg, and remembered). */
  findEngine?: (env: NodeJS.ProcessEnv) => Promise<EngineInfo | null>;
}

type Phase = "queued" | "running" | "succeeded" | "failed" | "cancelled";

interface Task {
  id: string;
  phase: Phase;
  progress?: number;
  error?: string;
  /** Aborted by cancel and expiry: leaves the queue or kills ffmpeg. */
  controller: AbortController;
  directory?: string;
  file?: string;
  /** The open download, when there is one. */
  body?: ReadStream;
  expiry?: NodeJS.Timeout;
  /** Settles (never rejects) when the render has ended, whatever the outcome. */
  done: Promise<void>;
}

type TakeSlot = ReturnType<typeof createRunSlots>;

export function createLocalVideo(options: LocalVideoOptions = {}): VideoCapability {
  const concurrency = options.concurrency ?? (() => 1);
  const tasks = new Map<string, Task>();
  // Rebuilt when the limit changes: tasks already waiting keep their pool, new ones take the new one.
  let slots: { max: number; take: TakeSlot } | undefined;

  function takeSlotFunction(): TakeSlot {
    const wanted = concurrency();
    const max = Number.isInteger(wanted) && wanted >= 1 ? wanted : 1;
    if (!slots || slots.max !== max) slots = { max, take: createRunSlots(max) };
    return slots.take;
  }

  async function ffmpegPath(): Promise<string> {
    if (!options.findEngine) return locateEngine("ffmpeg");
    const found = await options.findEngine(process.env);
    if (!found) throw new AudioEngineError("missing_engine", "ffmpeg is not installed on this machine", { engine: "ffmpeg" });
    return found.path;
  }

  async function render(task: Task, request: VideoRequest & { image: NonNullable<VideoRequest["image"]> }, binary: string, take: TakeSlot): Promise<void> {
    const signal = task.controller.signal;
    let release: (() => void) | undefined;
    try {
      release = await take(signal);
      task.phase = "running";
      task.progress = 0;
      task.directory = await mkdtemp(path.join(os.tmpdir(), "gw-video-"));
      signal.throwIfAborted();
      const file = path.join(task.directory, "clip.mp4");
      await renderKenBurns(request.image, {
        width: request.width,
        height: request.height,
        durationSeconds: request.durationSeconds,
        outputFile: file,
        signal,
        ffmpeg: binary,
        onProgress: (fraction) => {
          task.progress = Math.max(task.progress ?? 0, fraction);
        },
      });
      signal.throwIfAborted();
      task.phase = "succeeded";
      task.progress = 1;
      task.file = file;
    } catch (error) {
      await removeFiles(task);
      if (task.phase !== "cancelled") {
        task.phase = "failed";
        task.error = describeFailure(error);
      }
    } finally {
      release?.();
      if (tasks.get(task.id) === task) scheduleExpiry(task);
    }
  }

  function scheduleExpiry(task: Task): void {
    clearTimeout(task.expiry);
    task.expiry = setTimeout(() => void forget(task), LOCAL_VIDEO_TASK_TTL_MS);
    task.expiry.unref();
  }

  /** Stop the task if it still runs, remove its files, and drop it. */
  async function forget(task: Task): Promise<void> {
    if (tasks.get(task.id) === task) tasks.delete(task.id);
    clearTimeout(task.expiry);
    task.controller.abort(new Error("the local video task was dropped"));
    task.body?.destroy();
    await task.done;
    await removeFiles(task);
  }

  return {
    resubmitsLostTasks: true,

    async submit(request, { signal }) {
      if (request.model !== LOCAL_VIDEO_MODEL) {
        throw new UnsupportedContentError(`The local provider has no video model "${request.model}"; its video model is "${LOCAL_VIDEO_MODEL}".`, "model");
      }
      const image = request.image;
      if (!image) {
        throw new UnsupportedContentError(
          "kenburns needs a reference photo (image_url): it pans and zooms over a picture and cannot make a clip from text alone.",
          "image_url",
        );
      }
      signal.throwIfAborted();
      const binary = await ffmpegPath();
      signal.throwIfAborted();
      const task: Task = {
        id: `local_${randomBytes(12).toString("hex")}`,
        phase: "queued",
        controller: new AbortController(),
        done: Promise.resolve(),
      };
      tasks.set(task.id, task);
      task.done = render(task, { ...request, image }, binary, takeSlotFunction());
      return { taskId: task.id };
    },

    async poll(taskId): Promise<VideoTaskState> {
      const task = tasks.get(taskId);
      if (!task) return { state: "lost" };
      switch (task.phase) {
        case "queued":
          return { state: "queued" };
        case "running":
          return { state: "running", progress: task.progress ?? 0 };
        case "succeeded":
          return { state: "succeeded", output: { kind: "provider" } };
        case "failed":
          return { state: "failed", error: task.error ?? "the clip could not be rendered" };
        case "cancelled":
          return { state: "cancelled" };
      }
    },

    async download(taskId, { signal, maxBytes }) {
      const task = tasks.get(taskId);
      if (!task) throw new Error("The local video task is unknown: its clip was already downloaded, or the gateway restarted since it was made.");
      if (task.phase !== "succeeded" || !task.file) throw new Error(`The local video task has no clip to download (it is ${task.phase}).`);
      if (task.body) throw new Error("The local video task's clip is already being downloaded.");
      signal.throwIfAborted();
      const size = (await stat(task.file)).size;
      if (size > maxBytes) throw new Error(`The clip is ${size} bytes, more than the ${maxBytes} allowed.`);
      const body = createReadStream(task.file);
      task.body = body;
      // A download never read to its end is cut an hour after it started.
      scheduleExpiry(task);
      const onAbort = () => body.destroy(signal.reason instanceof Error ? signal.reason : new Error("the download was aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
      // `close` follows the end, an error and destroy() alike.
      body.once("close", () => {
        signal.removeEventListener("abort", onAbort);
        void forget(task);
      });
      return { body, contentType: "video/mp4" };
    },

    async cancel(taskId) {
      const task = tasks.get(taskId);
      if (!task || task.body) return;
      if (task.phase === "failed" || task.phase === "cancelled") return;
      task.phase = "cancelled";
      task.controller.abort(new Error("the local video task was cancelled"));
      await task.done;
      await removeFiles(task);
      if (tasks.get(task.id) === task) scheduleExpiry(task);
    },
  };
}

/** Remove the task's directory; never throws (what cannot be removed stays in the OS temp directory). */
async function removeFiles(task: Task): Promise<void> {
  const directory = task.directory;
  task.directory = undefined;
  task.file = undefined;
  if (directory) await rm(directory, { recursive: true, force: true }).catch(() => undefined);
}

/** What a failed task says: the engine's message (it names the engine, never a path), else a plain sentence. */
function describeFailure(error: unknown): string {
  if (error instanceof AudioEngineError) return error.message;
  if (error instanceof RangeError) return error.message;
  return "the local video engine could not render the clip";
}
