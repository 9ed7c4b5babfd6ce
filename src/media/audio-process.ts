// Running the audio engines (ffmpeg, ffprobe, espeak-ng): where they are, and one run of one of
// them with no shell, a deadline, the caller's abort signal, bounded output and a shared pool of
// run slots. Probes, conversions and synthesis are CPU-bound, so at most one run per CPU at a
// time: more only make every run slower, and each below the gateway's CPU priority
// (engine-priority.ts). Arguments are built by the callers from fixed words and server-made
// paths, never from a caller's string.
import { spawn } from "node:child_process";
import os from "node:os";
import { lowerEnginePriority } from "./engine-priority.js";
import { type EngineLookup, type EngineLookupOptions, lookupFfmpeg, lookupFfprobe, slowEngineMessage } from "./engines.js";
import { createRunSlots } from "./run-slots.js";

/** `busy`: the engine is installed but did not answer its version check in time (a loaded machine). */
export type AudioEngineFailure = "missing_engine" | "busy" | "timeout" | "failed";

export type AudioEngine = "ffmpeg" | "ffprobe" | "espeak-ng";

/**
 * An engine could not do its work on audio the gateway made or received from a vendor: not
 * installed (a 503), busy (a 503 to retry), too slow, or it failed. `message` names the engine and never a path;
 * `detail` is the end of the engine's own error output, for logs only.
 */
export class AudioEngineError extends Error {
  readonly engine: AudioEngine | undefined;
  readonly detail: string | undefined;

  constructor(
    readonly reason: AudioEngineFailure,
    message: string,
    about: { engine?: AudioEngine; detail?: string } = {},
  ) {
    super(message);
    this.name = "AudioEngineError";
    this.engine = about.engine;
    this.detail = about.detail;
  }
}

export interface EngineRunOptions {
  /** Written to the engine's stdin; without it stdin is closed. */
  stdin?: Buffer;
  signal?: AbortSignal | undefined;
  timeoutMs: number;
  /** Buffered stdout is limited to this; more kills the run. Ignored with onStdout. */
  maxStdoutBytes?: number;
  /** Receive stdout as it comes instead of buffering it (the caller keeps what it needs). Throwing kills the run. */
  onStdout?: (chunk: Buffer) => void;
}

const MAX_RUNNING = Math.max(1, os.availableParallelism());
const DEFAULT_MAX_STDOUT = 256 * 1024 * 1024;
// Enough of the engine's complaint to diagnose from the log.
const STDERR_TAIL = 2048;

const takeSlot = createRunSlots(MAX_RUNNING);

/** Run `engine` (at `binary`) with `args`; stdout when it exits with status 0. */
export async function runEngine(engine: AudioEngine, binary: string, args: string[], options: EngineRunOptions): Promise<Buffer> {
  const release = await takeSlot(options.signal);
  try {
    return await spawnEngine(engine, binary, args, options);
  } catch (error) {
    if (error instanceof AudioEngineError && error.reason === "missing_engine" && error.engine === engine) forgetEngine(engine);
    throw error;
  } finally {
    release();
  }
}

function spawnEngine(engine: AudioEngine, binary: string, args: string[], options: EngineRunOptions): Promise<Buffer> {
  const maxStdout = options.maxStdoutBytes ?? DEFAULT_MAX_STDOUT;
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: [options.stdin ? "pipe" : "ignore", "pipe", "pipe"], windowsHide: true });
    lowerEnginePriority(child.pid);
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = "";
    // The first reason to stop wins: a deadline, an abort, too much output, a callback's error.
    let stopped: { reason: unknown } | undefined;
    let settled = false;

    const stop = (reason: unknown) => {
      stopped ??= { reason };
      child.kill("SIGKILL");
    };
    const settle = (error: unknown, value?: Buffer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (error === undefined) resolve(value!);
      else reject(error);
    };
    const onAbort = () => stop(options.signal!.reason);
    const timer = setTimeout(
      () => stop(new AudioEngineError("timeout", `${engine} did not finish within ${formatSeconds(options.timeoutMs)}`, { engine })),
      options.timeoutMs,
    );
    options.signal?.addEventListener("abort", onAbort, { once: true });

    child.stdout!.on("data", (chunk: Buffer) => {
      if (stopped) return;
      if (options.onStdout) {
        try {
          options.onStdout(chunk);
        } catch (error) {
          stop(error);
        }
        return;
      }
      size += chunk.length;
      if (size > maxStdout) return stop(new AudioEngineError("failed", `${engine} produced more output than allowed`, { engine }));
      chunks.push(chunk);
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "EACCES")
        settle(new AudioEngineError("missing_engine", `${engine} is not installed on this machine`, { engine }));
      else settle(new AudioEngineError("failed", `${engine} could not be started`, { engine, detail: error.message }));
    });
    child.on("close", (code) => {
      if (stopped) return settle(stopped.reason);
      if (code === 0) return settle(undefined, Buffer.concat(chunks));
      settle(new AudioEngineError("failed", `${engine} failed (exit status ${code ?? "unknown"})`, { engine, detail: stderr.trim() }));
    });
    if (child.stdin) {
      // The engine may exit before reading all its input (a file it cannot read): its exit
      // status reports that, so a broken pipe is not an error of its own.
      child.stdin.on("error", () => undefined);
      child.stdin.end(options.stdin);
    }
  });
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

// A found binary is kept for the environment it was looked up in; a miss is not kept, so an
// install counts at once, and neither is a binary too busy to answer (it is asked again next time).
const located = new Map<AudioEngine, { key: string; found: Promise<EngineLookup> }>();
const lookups: Record<"ffmpeg" | "ffprobe", (env: NodeJS.ProcessEnv, options: EngineLookupOptions) => Promise<EngineLookup>> = {
  ffmpeg: lookupFfmpeg,
  ffprobe: lookupFfprobe,
};

/**
 * The path of ffmpeg or ffprobe (`override` when given); AudioEngineError `missing_engine` when
 * there is none, `busy` when it did not answer its version check in time. `options` is for tests.
 */
export async function locateEngine(engine: "ffmpeg" | "ffprobe", override?: string, options: EngineLookupOptions = {}): Promise<string> {
  if (override) return override;
  const key = [process.env.PATH, process.env.GW_FFMPEG_PATH, process.env.GW_FFPROBE_PATH].join("\0");
  let entry = located.get(engine);
  if (!entry || entry.key !== key) {
    entry = { key, found: lookups[engine](process.env, options) };
    located.set(engine, entry);
  }
  const lookup = await entry.found;
  if (lookup.status === "found") return lookup.engine.path;
  if (located.get(engine) === entry) located.delete(engine);
  if (lookup.status === "slow") throw new AudioEngineError("busy", slowEngineMessage(engine, lookup.timeoutMs), { engine });
  throw new AudioEngineError("missing_engine", `${engine} is not installed on this machine`, { engine });
}

function forgetEngine(engine: AudioEngine): void {
  located.delete(engine);
}
