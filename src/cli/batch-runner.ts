// The `--batch FILE` run the commands share (image-batch.ts, audio-batch.ts): JSON lines, one
// request body each, sent a few at a time. What a line means and writes is the command's; the rest
// is here so every batch behaves alike:
// - One JSON result line per request on stdout, in input order (deterministic, and easy to pair
//   with the input); each is printed as soon as it and every line before it are done.
// - A failed line (bad JSON, a 4xx, a network error) never stops the others; the command exits
//   non-zero after all ran. A 429 is not a failure yet: the line waits as long as the gateway's
//   Retry-After says (up to a minute, a few times) and is sent again. Ctrl-C stops starting new
//   lines, lets those in flight finish (they are paid for) and reports the rest as skipped; a
//   second Ctrl-C quits at once.
// - Progress on stderr only when stderr is a terminal; otherwise stderr carries errors alone.
import { promises as fs } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import pLimit from "p-limit";
import { GwApiError } from "../client/gw-api-error.js";
import { isObject } from "../json/json-values.js";
import { CliError } from "./cli-error.js";
import { writeStdout } from "./output.js";
import { readStdin } from "./stdin.js";

export interface BatchSettings {
  /** The JSON lines file, or - for stdin. */
  source: string;
  directory: string;
  concurrency: number;
  stderr?: NodeJS.WriteStream;
}

export interface BatchOptions<Answer> extends BatchSettings {
  /** Request parameters from the flags; every line's own fields override them. */
  defaults: Record<string, unknown>;
  /** Sends one body; whatever it throws (a CliError while preparing it too) fails that line alone. */
  send(body: Record<string, unknown>): Promise<Answer>;
}

/** What every result line carries; a command adds what its requests produced. */
export interface BatchLineResult {
  line: number;
  status: "ok" | "error" | "skipped";
  error?: string;
  code?: string;
  http_status?: number;
}

export interface BatchLine {
  line: number;
  body: Record<string, unknown>;
}

export type BatchItem = BatchLine | { line: number; error: string };

/** Non-blank lines, numbered from 1 as an editor shows them; one that is not a JSON object is an error item. */
export function parseBatchLines(text: string): BatchItem[] {
  const items: BatchItem[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      items.push({ line, error: `not JSON: ${(error as Error).message}` });
      return;
    }
    items.push(isObject(value) ? { line, body: value } : { line, error: "not a JSON object" });
  });
  return items;
}

export async function readBatchSource(source: string): Promise<string> {
  if (source === "-") return readStdin();
  try {
    return await fs.readFile(source, "utf8");
  } catch (error) {
    throw new CliError(`${source}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`);
  }
}

/**
 * Runs every line of the source into the directory; throws the CliError to exit with when a line
 * failed or was skipped. `runLine` must turn each failure into its result (see batchFailure), never
 * throw; its signal is aborted by Ctrl-C.
 */
export async function runBatch<Result extends BatchLineResult>(
  settings: BatchSettings,
  runLine: (item: BatchLine, signal: AbortSignal) => Promise<Result>,
): Promise<void> {
  const stderr = settings.stderr ?? process.stderr;
  const items = parseBatchLines(await readBatchSource(settings.source));
  try {
    await fs.mkdir(settings.directory, { recursive: true });
  } catch (error) {
    throw new CliError(`${settings.directory}: ${(error as Error).message}`);
  }

  const results: Array<BatchLineResult | undefined> = new Array(items.length);
  let printed = 0;
  const progress = batchProgress(items.length, stderr);
  // Printing is chained so result lines leave in order even when stdout is slow.
  let printing = Promise.resolve();
  const settle = (index: number, result: BatchLineResult): Promise<void> => {
    results[index] = result;
    progress.settled(result);
    printing = printing.then(() =>
      // On a terminal stdout and stderr share the screen: the bar is cleared while result lines print.
      progress.aside(async () => {
        while (printed < results.length && results[printed] !== undefined) await writeStdout(`${JSON.stringify(results[printed++])}\n`);
      }),
    );
    return printing;
  };

  const interrupt = new AbortController();
  const onInterrupt = (): void => {
    if (interrupt.signal.aborted) process.exit(130);
    interrupt.abort();
    progress.message("interrupted: waiting for the requests in flight (Ctrl-C again to quit now)");
  };
  const run = async (item: BatchItem): Promise<BatchLineResult> =>
    "error" in item ? { line: item.line, status: "error", error: item.error } : runLine(item, interrupt.signal);
  process.on("SIGINT", onInterrupt);
  try {
    const limit = pLimit(Math.max(1, settings.concurrency));
    // After Ctrl-C the queued lines start and end at once: they stay unsent and are reported skipped.
    await Promise.all(items.map((item, index) => limit(async () => (interrupt.signal.aborted ? undefined : settle(index, await run(item))))));
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

/** A line's `output` field: a plain file name (no directory), so a line cannot write outside the directory. */
export function checkOutputName(output: unknown): string | undefined {
  if (output !== undefined && (typeof output !== "string" || !/^[^/\\]+$/.test(output) || output === "." || output === "..")) {
    throw new CliError(`"output" must be a file name without a directory, got ${JSON.stringify(output)}`);
  }
  return output;
}

const RATE_LIMIT_RETRIES = 5;
const LONGEST_WAIT_SECONDS = 60;

/** Send, and after a 429 wait the Retry-After the gateway gave and send again (a few times; not once interrupted). */
export async function sendRespectingRateLimit<T>(send: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      const wait = error instanceof GwApiError && error.status === 429 ? error.retryAfterSeconds : undefined;
      if (wait === undefined || wait > LONGEST_WAIT_SECONDS || attempt >= RATE_LIMIT_RETRIES || signal?.aborted) throw error;
      // timers/promises removes its abort listener when the wait ends: none pile up on the batch's signal.
      await sleep(wait * 1000, undefined, { signal }).catch(() => undefined);
      if (signal?.aborted) throw error;
    }
  }
}

/** The result fields of a line that failed; the gateway's code and HTTP status when it answered. */
export function batchFailure(error: unknown): Pick<BatchLineResult, "status" | "error" | "code" | "http_status"> {
  const failed: Pick<BatchLineResult, "status" | "error" | "code" | "http_status"> = {
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
  settled(result: BatchLineResult): void;
  message(text: string): void;
  /** Run `print` (which writes result lines to stdout) with the bar off the screen, then draw it again. */
  aside(print: () => Promise<void>): Promise<void>;
  /** Take the bar off the screen for good: what follows (the summary, the shell's prompt) starts on a clean line. */
  end(): void;
}

/** Failed lines as `line N: message` on stderr; on a terminal also a counter rewritten in place. */
function batchProgress(total: number, stream: NodeJS.WriteStream): BatchProgress {
  const terminal = stream.isTTY === true && total > 0;
  let done = 0;
  let failed = 0;
  let shown = false;
  let printing = 0;
  const bar = (): string => {
    const width = 20;
    const filled = Math.round((done / total) * width);
    return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}${failed ? `, ${failed} failed` : ""}`;
  };
  const hide = (): void => {
    if (shown) stream.write("\r\x1b[2K");
    shown = false;
  };
  const show = (): void => {
    if (!terminal || printing > 0) return;
    stream.write(`\r\x1b[2K${bar()}`);
    shown = true;
  };
  const write = (text: string): void => {
    hide();
    stream.write(`${text}\n`);
    show();
  };
  show();
  return {
    settled(result) {
      if (result.status === "skipped") return;
      done += 1;
      if (result.status === "error") {
        failed += 1;
        write(`line ${result.line}: ${result.error}`);
      } else show();
    },
    message: write,
    async aside(print) {
      printing += 1;
      hide();
      try {
        await print();
      } finally {
        printing -= 1;
        show();
      }
    },
    end() {
      printing += 1;
      hide();
    },
  };
}
