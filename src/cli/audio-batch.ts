// `gw audio speak --batch FILE`: JSON lines, one speech request body each, sent a few at a time,
// the way `gw image generate --batch` runs (image-batch.ts; its line reader is shared):
// - Each line is merged over the defaults the flags give (the line wins) and may name its file in
//   an `output` field (a plain name, no directory; its extension asks for that format like -o
//   does); otherwise the audio is written as <line>.<ext> in the directory. Files are overwritten.
// - One JSON result line per request on stdout, in input order, each printed as soon as it and
//   every line before it are done: {line, status} and, when it ran, what `--json` prints for one.
// - A failed line never stops the others; the command exits non-zero after all ran. A 429 waits
//   the gateway's Retry-After (up to a minute, a few times) and is sent again. Ctrl-C stops
//   starting new lines, lets those in flight finish and reports the rest as skipped; a second
//   Ctrl-C quits at once.
// - Progress on stderr only when stderr is a terminal; otherwise stderr carries errors alone.
import { promises as fs } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pLimit from "p-limit";
import type { SpeechResult } from "../client/audio-types.js";
import { GwApiError } from "../client/gw-api-error.js";
import { type SpeechSummary, speechFormatFor, speechSummary, speechTarget, writeAudio } from "./audio-files.js";
import { CliError } from "./cli-error.js";
import { type BatchItem, parseBatchLines } from "./image-batch.js";
import { writeStdout } from "./output.js";
import { readStdin } from "./stdin.js";

export interface SpeechBatchOptions {
  /** The JSON lines file, or - for stdin. */
  source: string;
  directory: string;
  concurrency: number;
  /** Request parameters from the flags; every line's own fields override them. */
  defaults: Record<string, unknown>;
  send(body: Record<string, unknown>): Promise<SpeechResult>;
  stderr?: NodeJS.WriteStream;
}

export type SpeechBatchResult = {
  line: number;
  status: "ok" | "error" | "skipped";
  error?: string;
  code?: string;
  http_status?: number;
} & Partial<SpeechSummary>;

export async function runSpeechBatch(options: SpeechBatchOptions): Promise<void> {
  const stderr = options.stderr ?? process.stderr;
  const items = parseBatchLines(await readBatchSource(options.source));
  try {
    await fs.mkdir(options.directory, { recursive: true });
  } catch (error) {
    throw new CliError(`${options.directory}: ${(error as Error).message}`);
  }

  const results: Array<SpeechBatchResult | undefined> = new Array(items.length);
  let printed = 0;
  const progress = batchProgress(items.length, stderr);
  // Printing is chained so result lines leave in order even when stdout is slow.
  let printing = Promise.resolve();
  const settle = (index: number, result: SpeechBatchResult): Promise<void> => {
    results[index] = result;
    progress.settled(result);
    printing = printing.then(async () => {
      while (printed < results.length && results[printed] !== undefined) await writeStdout(`${JSON.stringify(results[printed++])}\n`);
    });
    return printing;
  };

  const interrupt = new AbortController();
  const onInterrupt = (): void => {
    if (interrupt.signal.aborted) process.exit(130);
    interrupt.abort();
    progress.message("interrupted: waiting for the requests in flight (Ctrl-C again to quit now)");
  };
  process.on("SIGINT", onInterrupt);
  try {
    const limit = pLimit(Math.max(1, options.concurrency));
    await Promise.all(
      items.map((item, index) => limit(async () => (interrupt.signal.aborted ? undefined : settle(index, await runLine(item, options, interrupt.signal))))),
    );
    for (const [index, item] of items.entries()) {
      if (results[index] === undefined) await settle(index, { line: item.line, status: "skipped", error: "interrupted before it was sent" });
    }
    await printing;
  } finally {
    process.off("SIGINT", onInterrupt);
    progress.end();
  }

  const skipped = results.filter((result) => result?.status === "skipped").length;
  const failed = results.filter((result) => result?.status === "error").length;
  if (skipped > 0) throw new CliError(`interrupted: ${skipped} of ${items.length} requests not sent${failed ? `, ${failed} failed` : ""}`, 130);
  if (failed > 0) throw new CliError(`${failed} of ${items.length} requests failed`);
}

async function readBatchSource(source: string): Promise<string> {
  if (source === "-") return readStdin();
  try {
    return await fs.readFile(source, "utf8");
  } catch (error) {
    throw new CliError(`${source}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`);
  }
}

/** One line, start to end; every failure becomes its result line, never an exception. */
async function runLine(item: BatchItem, options: SpeechBatchOptions, signal: AbortSignal): Promise<SpeechBatchResult> {
  if ("error" in item) return { line: item.line, status: "error", error: item.error };
  let summary: Partial<SpeechSummary> = {};
  try {
    const { output, body } = lineRequest(item.body, options.defaults);
    const result = await sendRespectingRateLimit(() => options.send(body), signal);
    summary = speechSummary(result, null);
    const target = speechTarget(result, path.join(options.directory, output ?? String(item.line)));
    await writeAudio(target, result.audio);
    return { line: item.line, status: "ok", ...speechSummary(result, target.path) };
  } catch (error) {
    return { line: item.line, ...summary, ...failure(error) };
  }
}

const RATE_LIMIT_RETRIES = 5;
const LONGEST_WAIT_SECONDS = 60;

/** Send, and after a 429 wait the Retry-After the gateway gave and send again (a few times; not once interrupted). */
async function sendRespectingRateLimit<T>(send: () => Promise<T>, signal: AbortSignal): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      const wait = error instanceof GwApiError && error.status === 429 ? error.retryAfterSeconds : undefined;
      if (wait === undefined || wait > LONGEST_WAIT_SECONDS || attempt >= RATE_LIMIT_RETRIES || signal.aborted) throw error;
      await sleep(wait * 1000, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) throw error;
    }
  }
}

/** The body to send and the line's own file name, if it named one. */
function lineRequest(line: Record<string, unknown>, defaults: Record<string, unknown>): { output: string | undefined; body: Record<string, unknown> } {
  const { output, ...fields } = line;
  if (output !== undefined && (typeof output !== "string" || !/^[^/\\]+$/.test(output) || output === "." || output === "..")) {
    throw new CliError(`"output" must be a file name without a directory, got ${JSON.stringify(output)}`);
  }
  const body: Record<string, unknown> = { ...defaults, ...fields };
  // `response_format` is the API's alias of `format`: one field goes, so a line's alias is not shadowed by a flag's default.
  const lineFormat = typeof fields.format === "string" ? fields.format : typeof fields.response_format === "string" ? fields.response_format : undefined;
  const format = speechFormatFor(lineFormat, output, { format: "format", target: "output" });
  if (format !== undefined) {
    delete body.response_format;
    body.format = format;
  }
  return { output, body };
}

function failure(error: unknown): Pick<SpeechBatchResult, "status" | "error" | "code" | "http_status"> {
  const failed: Pick<SpeechBatchResult, "status" | "error" | "code" | "http_status"> = {
    status: "error",
    error: error instanceof Error ? error.message : String(error),
  };
  if (error instanceof GwApiError) {
    if (error.code) failed.code = error.code;
    if (error.status > 0) failed.http_status = error.status;
  }
  return failed;
}

interface BatchProgress {
  settled(result: SpeechBatchResult): void;
  message(text: string): void;
  end(): void;
}

/** Failed lines as `line N: message` on stderr; on a terminal also a counter rewritten in place. */
function batchProgress(total: number, stream: NodeJS.WriteStream): BatchProgress {
  const terminal = stream.isTTY === true;
  let done = 0;
  let failed = 0;
  const bar = (): string => {
    const width = 20;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}${failed ? `, ${failed} failed` : ""}`;
  };
  const write = (text: string): void => {
    stream.write(terminal ? `\r\x1b[2K${text}\n${bar()}` : `${text}\n`);
  };
  if (terminal && total > 0) stream.write(bar());
  return {
    settled(result) {
      if (result.status === "skipped") return;
      done += 1;
      if (result.status === "error") {
        failed += 1;
        write(`line ${result.line}: ${result.error}`);
      } else if (terminal) stream.write(`\r\x1b[2K${bar()}`);
    },
    message: write,
    end() {
      if (terminal && total > 0) stream.write("\n");
    },
  };
}
