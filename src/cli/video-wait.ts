// `--wait` of `gw video generate` and `gw video status`: poll the job until it ends, showing where
// it is on stderr, then save the clip.
// - On a terminal (stderr) one status line is rewritten in place: status, progress, time since
//   it was queued (ticking every second); otherwise a plain line each time the status changes.
// - SUCCEEDED: the clip is streamed from its signed link to -o FILE (via a temp file, renamed when
//   complete), to -o DIR/video-<id>.mp4, to stdout with -o - (never a terminal: checked before
//   anything is sent), or by default to video-<id>.mp4 in the current directory, never
//   overwriting there; the path is printed (with --json the final job, plus `file`).
// - FAILED or CANCELLED: the job's error, non-zero (with --json the final job is printed first).
// - Ctrl-C stops waiting but never cancels: the job goes on at the gateway; how to follow it again
//   or cancel it is printed, exit 130. A second Ctrl-C quits at once.
import { existsSync, promises as fs } from "node:fs";
import path from "node:path";
import { Flags } from "@oclif/core";
import type { GwApiError } from "../client/gw-api-error.js";
import type { GwClient } from "../client/gw-client.js";
import { isFinishedJob } from "../client/video-client.js";
import type { VideoJobBody } from "../client/video-types.js";
import { CliError, UsageError } from "./cli-error.js";
import { numberFlag } from "./flags.js";
import { saveDownload } from "./local-files.js";
import { printJson, printLine } from "./output.js";
import { transferProgress } from "./transfer-progress.js";
import { clock, span, statusText, utcTime } from "./video-output.js";

export const DEFAULT_POLL_SECONDS = 2;
const POLL_SECONDS = { min: 0.5, max: 300 };

export const videoWaitFlags = {
  wait: Flags.boolean({
    description: "wait for the job to finish (status on stderr), then save the clip and print its path; Ctrl-C stops waiting without cancelling the job",
    default: false,
  }),
  output: Flags.string({
    char: "o",
    description:
      "with --wait: where to save the clip: a FILE (overwritten), a directory, or - for stdout (refused on a terminal) [default: ./video-<job id>.mp4]",
  }),
  "poll-interval": numberFlag({
    description: `with --wait: seconds between polls, ${POLL_SECONDS.min} to ${POLL_SECONDS.max} [default: ${DEFAULT_POLL_SECONDS}]`,
  }),
};

export interface WaitFlags {
  wait: boolean;
  output?: string;
  "poll-interval"?: number;
  json: boolean;
}

/** Everything about --wait, -o and --poll-interval that can be refused before a request is sent. */
export async function checkWaitFlags(flags: WaitFlags): Promise<void> {
  if (!flags.wait) {
    if (flags.output !== undefined) throw new UsageError("-o saves the finished clip, so it needs --wait");
    if (flags["poll-interval"] !== undefined) throw new UsageError("--poll-interval needs --wait");
    return;
  }
  const interval = flags["poll-interval"];
  if (interval !== undefined && (interval < POLL_SECONDS.min || interval > POLL_SECONDS.max)) {
    throw new UsageError(`--poll-interval must be from ${POLL_SECONDS.min} to ${POLL_SECONDS.max} seconds; got ${interval}`);
  }
  if (flags.output === "-") {
    if (flags.json) throw new UsageError("--json and -o - both want stdout; choose one");
    if (process.stdout.isTTY) throw new CliError("-o - writes the video to stdout, which is a terminal; redirect it (> clip.mp4), pipe it, or pass -o FILE");
    return;
  }
  if (flags.output !== undefined) {
    if (flags.output.trim() === "") throw new UsageError("-o names no file");
    if (await isDirectory(flags.output)) return;
    const directory = path.dirname(flags.output);
    if (!(await isDirectory(directory))) throw new CliError(`-o ${flags.output}: the directory ${directory} does not exist`);
  }
}

interface ClipTarget {
  path: string;
  /** The default name is never overwritten; a file the user named is. */
  exclusive: boolean;
}

async function clipTarget(output: string | undefined, id: string): Promise<ClipTarget> {
  const name = `video-${id.replace(/[^A-Za-z0-9_-]/g, "_")}.mp4`;
  if (output === undefined) return { path: name, exclusive: true };
  if (output === "-") return { path: "-", exclusive: false };
  if (await isDirectory(output)) return { path: path.join(output, name), exclusive: true };
  return { path: output, exclusive: false };
}

async function isDirectory(file: string): Promise<boolean> {
  try {
    return (await fs.stat(file)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Wait for the job `id` (already known as `known`, e.g. the 202 of a submission, shown at once),
 * then save its clip or fail with its error, as the file comment says.
 */
export async function followJob(client: GwClient, id: string, flags: WaitFlags, known?: VideoJobBody): Promise<void> {
  // Known before waiting, so a clash with an earlier download fails now rather than when the job ends.
  const target = await clipTarget(flags.output, id);
  if (target.exclusive && existsSync(target.path)) throw new CliError(`${target.path} already exists; pass -o FILE to choose where to save the clip`);
  const interrupt = new AbortController();
  const onInterrupt = (): void => {
    if (interrupt.signal.aborted) process.exit(130);
    interrupt.abort();
  };
  process.on("SIGINT", onInterrupt);
  let job = known;
  try {
    const display = waitDisplay(id);
    if (known) display.update(known);
    try {
      job = await client.video.waitForJob(id, {
        intervalSeconds: flags["poll-interval"] ?? DEFAULT_POLL_SECONDS,
        signal: interrupt.signal,
        onUpdate: (update) => {
          job = update;
          display.update(update);
        },
        onRetry: (error, delay) => display.retry(error, delay),
      });
    } catch (error) {
      if (interrupt.signal.aborted) throw stoppedWaiting(id, job, flags.output);
      throw error;
    } finally {
      display.end();
    }

    if (job.status !== "SUCCEEDED") {
      if (flags.json) printJson(job);
      throw new CliError(`the video job ${id} ended ${job.status}: ${job.error ?? "the gateway gave no reason"}`);
    }
    if (target.exclusive && existsSync(target.path)) {
      throw new CliError(
        `${target.path} appeared while waiting; pass -o FILE to choose where to save the clip${job.resultExpiresAt ? ` (its link works until ${utcTime(job.resultExpiresAt)})` : ""}`,
      );
    }
    try {
      const clip = await client.video.downloadClip(job, { signal: interrupt.signal });
      await saveDownload(clip.body, target.path, transferProgress(`downloading ${id}`, clip.sizeBytes));
    } catch (error) {
      if (interrupt.signal.aborted) throw new CliError(`stopped before the clip was saved; save it with: ${resumeCommand(id, flags.output)}`, 130);
      throw error;
    }
  } finally {
    process.off("SIGINT", onInterrupt);
  }
  if (flags.json) return printJson({ ...job, file: target.path === "-" ? null : target.path });
  if (target.path !== "-") printLine(target.path);
}

function stoppedWaiting(id: string, job: VideoJobBody | undefined, output: string | undefined): CliError {
  const state = job ? ` (${job.status})` : "";
  return new CliError(
    [
      `stopped waiting; the video job ${id} goes on at the gateway${state}.`,
      `  wait for it again: ${resumeCommand(id, output)}`,
      `  cancel it:         gw video cancel ${id}`,
    ].join("\n"),
    130,
  );
}

function resumeCommand(id: string, output: string | undefined): string {
  return `gw video status ${id} --wait${output === undefined ? "" : ` -o ${shellWord(output)}`}`;
}

function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

export interface WaitDisplay {
  update(job: VideoJobBody): void;
  retry(error: GwApiError, delaySeconds: number): void;
  end(): void;
}

/**
 * Where the job is, on `stream`: a terminal gets one line rewritten in place (and redrawn every
 * second so the elapsed time moves); anything else a line per status change.
 */
export function waitDisplay(id: string, stream: NodeJS.WriteStream = process.stderr, now: () => number = Date.now): WaitDisplay {
  const live = Boolean(stream.isTTY);
  const startedWaiting = now();
  let last: VideoJobBody | undefined;
  let problem = "";
  let drawn = false;
  let timer: NodeJS.Timeout | undefined;

  const elapsed = (job: VideoJobBody): string => {
    const since = Date.parse(job.queuedAt);
    const until = job.finishedAt ? Date.parse(job.finishedAt) : now();
    const seconds = ((Number.isNaN(until) ? now() : until) - (Number.isNaN(since) ? startedWaiting : since)) / 1000;
    return clock(seconds);
  };
  const line = (job: VideoJobBody): string => `${id}  ${statusText(job)}  ${elapsed(job)} elapsed`;
  const draw = (): void => {
    if (!last) return;
    const text = `${line(last)}${problem ? `  (${problem})` : ""}`;
    const room = stream.columns > 1 ? stream.columns - 1 : text.length;
    stream.write(`\r\x1b[2K${text.length > room ? `${text.slice(0, room - 1)}…` : text}`);
    drawn = true;
  };

  return {
    update(job) {
      problem = "";
      if (live) {
        last = job;
        draw();
        if (!timer && !isFinishedJob(job)) {
          timer = setInterval(draw, 1000);
          timer.unref();
        }
        return;
      }
      if (job.status !== last?.status) stream.write(`${line(job)}\n`);
      last = job;
    },
    retry(error, delaySeconds) {
      const text = `${error.message}; polling again in ${span(delaySeconds)}`;
      if (live && last) {
        problem = text;
        draw();
      } else stream.write(`${text}\n`);
    },
    end() {
      clearInterval(timer);
      timer = undefined;
      if (drawn) stream.write("\n");
      drawn = false;
    },
  };
}
