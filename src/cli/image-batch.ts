// `--batch FILE` for the image commands: JSON lines, one request body each, sent a few at a time.
// - Each line is merged over the defaults the flags give (the line wins) and may name its file
//   stem in an `output` field (a plain name, no directory; its extension asks for that format
//   like -o does); otherwise pictures are written as <line>-<index>.<ext> in the directory.
//   Files are overwritten: the directory is the user's choice, and a re-run must not stall.
// - One JSON result line per request on stdout, in input order (deterministic, and easy to pair
//   with the input); each is printed as soon as it and every line before it are done.
// - A failed line (bad JSON, a 4xx, a network error) never stops the others; the command exits
//   non-zero after all ran. A 429 is not a failure yet: the line waits as long as the gateway's
//   Retry-After says (up to a minute, a few times) and is sent again. Ctrl-C stops starting new
//   lines, lets those in flight finish (they are paid for) and reports the rest as skipped; a
//   second Ctrl-C quits at once.
// - Progress on stderr only when stderr is a terminal; otherwise stderr carries errors alone.
import { promises as fs } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pLimit from "p-limit";
import { GwApiError, isRecord } from "../client/gw-api-error.js";
import type { ImageResultBody } from "../client/image-types.js";
import { CliError } from "./cli-error.js";
import { extensionOf, type PictureTarget, pictureTargets, writePicture } from "./image-files.js";
import { emptyResultError, outputFormatFor } from "./image-options.js";
import { writeStdout } from "./output.js";
import { readStdin } from "./stdin.js";

export interface BatchOptions {
  /** The JSON lines file, or - for stdin. */
  source: string;
  directory: string;
  concurrency: number;
  /** Request parameters from the flags; every line's own fields override them. */
  defaults: Record<string, unknown>;
  /** Sends one body; a CliError it throws fails that line before any request. */
  send(body: Record<string, unknown>): Promise<ImageResultBody>;
  /** Aborted by Ctrl-C (set by runImageBatch): rate-limit waits end early. */
  signal?: AbortSignal;
  stderr?: NodeJS.WriteStream;
}

export interface BatchResult {
  line: number;
  status: "ok" | "error" | "skipped";
  /** The generation id (the request id in the gateway's logs). */
  id?: string;
  model?: string;
  asset_ids?: string[];
  files?: string[];
  error?: string;
  code?: string;
  http_status?: number;
}

export type BatchItem = { line: number; body: Record<string, unknown> } | { line: number; error: string };

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
    items.push(isRecord(value) ? { line, body: value } : { line, error: "not a JSON object" });
  });
  return items;
}

export async function runImageBatch(options: BatchOptions): Promise<void> {
  const stderr = options.stderr ?? process.stderr;
  const items = parseBatchLines(await readBatchSource(options.source));
  try {
    await fs.mkdir(options.directory, { recursive: true });
  } catch (error) {
    throw new CliError(`${options.directory}: ${(error as Error).message}`);
  }

  const results: Array<BatchResult | undefined> = new Array(items.length);
  let printed = 0;
  const progress = batchProgress(items.length, stderr);
  // Printing is chained so result lines leave in order even when stdout is slow.
  let printing = Promise.resolve();
  const settle = (index: number, result: BatchResult): Promise<void> => {
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
    const lineOptions = { ...options, signal: interrupt.signal };
    const limit = pLimit(Math.max(1, options.concurrency));
    // After Ctrl-C the queued lines start and end at once: they stay unsent and are reported skipped.
    await Promise.all(items.map((item, index) => limit(async () => (interrupt.signal.aborted ? undefined : settle(index, await runItem(item, lineOptions))))));
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
async function runItem(item: BatchItem, options: BatchOptions): Promise<BatchResult> {
  if ("error" in item) return { line: item.line, status: "error", error: item.error };
  const result: BatchResult = { line: item.line, status: "ok" };
  try {
    const { output, body } = lineRequest(item.body, options.defaults);
    const answer = await sendRespectingRateLimit(() => options.send(body), options.signal);
    result.id = answer.id;
    result.model = answer.model;
    result.asset_ids = answer.data.flatMap((picture) => (picture.asset_id ? [picture.asset_id] : []));
    const empty = emptyResultError(answer);
    if (empty) throw empty;
    const targets: PictureTarget[] =
      output === undefined
        ? answer.data.map((picture, index) => ({
            path: path.join(options.directory, `${item.line}-${index + 1}.${extensionOf(picture.media_type)}`),
            exclusive: false,
          }))
        : pictureTargets(answer.data, path.join(options.directory, output));
    result.files = [];
    for (const [index, picture] of answer.data.entries()) {
      await writePicture(targets[index]!, Buffer.from(picture.b64_json, "base64"));
      result.files.push(targets[index]!.path);
    }
    return result;
  } catch (error) {
    return { ...result, ...failure(error) };
  }
}

const RATE_LIMIT_RETRIES = 5;
const LONGEST_WAIT_SECONDS = 60;

/** Send, and after a 429 wait the Retry-After the gateway gave and send again (a few times; not once interrupted). */
export async function sendRespectingRateLimit(send: () => Promise<ImageResultBody>, signal: AbortSignal | undefined): Promise<ImageResultBody> {
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

/** The body to send and the line's own file stem, if it named one. */
function lineRequest(line: Record<string, unknown>, defaults: Record<string, unknown>): { output: string | undefined; body: Record<string, unknown> } {
  const { output, ...fields } = line;
  if (output !== undefined && (typeof output !== "string" || !/^[^/\\]+$/.test(output) || output === "." || output === "..")) {
    throw new CliError(`"output" must be a file name without a directory, got ${JSON.stringify(output)}`);
  }
  const body = { ...defaults, ...fields };
  const lineFormat = typeof fields.output_format === "string" ? fields.output_format : undefined;
  const format = outputFormatFor(lineFormat, output, { format: "output_format", target: "output" });
  if (format !== undefined) body.output_format = format;
  return { output, body };
}

function failure(error: unknown): Pick<BatchResult, "status" | "error" | "code" | "http_status"> {
  const failed: Pick<BatchResult, "status" | "error" | "code" | "http_status"> = {
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
  settled(result: BatchResult): void;
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
