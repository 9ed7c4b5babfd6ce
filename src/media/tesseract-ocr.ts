// Read the text in a picture with the local tesseract binary: `tesseract - stdout tsv`, the
// picture on stdin (no temp file to clean up), no shell, a time limit, and the process killed when
// the caller goes away. At most one run per CPU at a time: tesseract is CPU-bound, and more runs
// than cores only make every one of them slower. OMP_THREAD_LIMIT=1 keeps each run on one core
// for the same reason (tesseract's OpenMP threads fight each other under parallel load). It runs
// below the gateway's CPU priority (engine-priority.ts).
import { type ExecFileException, execFile } from "node:child_process";
import os from "node:os";
import { lowerEnginePriority } from "./engine-priority.js";
import { createRunSlots } from "./run-slots.js";
import { type OcrText, parseTesseractTsv } from "./tesseract-tsv.js";

export type { OcrLine, OcrText, OcrWord } from "./tesseract-tsv.js";

export type OcrFailure = "missing" | "timeout" | "failed";

/** The engine could not read the picture: not installed, too slow, or it failed. */
export class OcrEngineError extends Error {
  constructor(
    readonly reason: OcrFailure,
    message: string,
  ) {
    super(message);
    this.name = "OcrEngineError";
  }
}

export interface TesseractOptions {
  /** The tesseract binary (see findTesseract in engines.ts). */
  binary: string;
  /** Default 60 s; the process is killed after it. */
  timeoutMs?: number;
  /** Aborting kills the process; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 60_000;
// A page of TSV is tens of kilobytes; this only stops a runaway process from filling memory.
const MAX_OUTPUT_BYTES = 32 * 1024 * 1024;
const MAX_RUNNING = Math.max(1, os.availableParallelism());

const takeSlot = createRunSlots(MAX_RUNNING);

/** Recognise the text of a picture in a format tesseract reads (PNG is the safe choice). */
export async function recognizeText(picture: Buffer, options: TesseractOptions): Promise<OcrText> {
  const release = await takeSlot(options.signal);
  try {
    return parseTesseractTsv(await runTesseract(picture, options));
  } finally {
    release();
  }
}

function runTesseract(picture: Buffer, options: TesseractOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = execFile(
      options.binary,
      ["-", "stdout", "tsv"],
      {
        encoding: "utf8",
        timeout: timeoutMs,
        killSignal: "SIGKILL",
        maxBuffer: MAX_OUTPUT_BYTES,
        windowsHide: true,
        env: { ...process.env, OMP_THREAD_LIMIT: "1" },
        ...(options.signal ? { signal: options.signal } : {}),
      },
      (error: ExecFileException | null, stdout: string) => {
        if (!error) return resolve(stdout);
        if (options.signal?.aborted) return reject(options.signal.reason);
        reject(engineError(error, timeoutMs));
      },
    );
    lowerEnginePriority(child.pid);
    // tesseract may exit before reading all of stdin (an unreadable picture): its exit status
    // reports that, so a broken pipe here is not an error of its own.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(picture);
  });
}

function engineError(error: ExecFileException, timeoutMs: number): OcrEngineError {
  if (error.code === "ENOENT" || error.code === "EACCES") return new OcrEngineError("missing", "tesseract is not installed on this machine");
  if (error.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") return new OcrEngineError("failed", "tesseract produced more output than allowed");
  if (error.killed) return new OcrEngineError("timeout", `tesseract did not finish within ${Math.round(timeoutMs / 1000)} s`);
  return new OcrEngineError("failed", `tesseract could not read the picture (exit status ${typeof error.code === "number" ? error.code : "unknown"})`);
}
