// `--wait` of `gw batch submit` and `gw batch status`: poll the batch about every second until it
// ends, showing where it is on stderr (batch-progress.ts), then its final line on stderr.
// - completed: exit 0 (lines that failed are counted, and where to read them said);
// - failed (its input's problems listed), expired or cancelled: non-zero, saying which (with --json
//   the final batch is printed first);
// - Ctrl-C stops waiting but never cancels: the batch goes on at the gateway; how to follow it,
//   read its results or cancel it is printed, exit 130. A second Ctrl-C quits at once.
import type { BatchBody } from "../client/batch-types.js";
import type { BatchesClient } from "../client/batches-client.js";
import { countsText, problemLines } from "./batch-output.js";
import { batchProgress } from "./batch-progress.js";
import { CliError } from "./cli-error.js";
import { note, printJson } from "./output.js";
import { span } from "./video-output.js";

export const POLL_SECONDS = 1;

/**
 * Wait for the batch `id` (already known as `known`, e.g. the creation's answer, shown at once)
 * and answer its final state when it completed; anything else throws, as the file comment says.
 */
export async function followBatch(client: BatchesClient, id: string, options: { json: boolean }, known?: BatchBody): Promise<BatchBody> {
  const interrupt = new AbortController();
  const onInterrupt = (): void => {
    if (interrupt.signal.aborted) process.exit(130);
    interrupt.abort();
  };
  process.on("SIGINT", onInterrupt);
  let batch = known;
  const display = batchProgress(id);
  try {
    if (known) display.update(known);
    batch = await client.waitForBatch(id, {
      intervalSeconds: POLL_SECONDS,
      signal: interrupt.signal,
      onUpdate: (update) => {
        batch = update;
        display.update(update);
      },
      onRetry: (error, delay) => display.retry(error, delay),
    });
  } catch (error) {
    if (interrupt.signal.aborted) throw stoppedWaiting(id, batch);
    throw error;
  } finally {
    display.end();
    process.off("SIGINT", onInterrupt);
  }
  note(finalLine(batch));
  if (batch.status === "completed") {
    if (batch.request_counts.failed > 0) note(`the failed lines' errors: gw batch results ${id} --errors`);
    return batch;
  }
  if (options.json) printJson(batch);
  throw endedError(batch);
}

/** "batch_01J... completed: 10 done, 0 failed of 10, in 42s". */
export function finalLine(batch: BatchBody): string {
  const ended = batch.completed_at ?? batch.failed_at ?? batch.expired_at ?? batch.cancelled_at;
  return `${batch.id} ${batch.status}: ${countsText(batch)}${ended ? `, in ${span(ended - batch.created_at)}` : ""}`;
}

/** Why a batch that did not complete is a failure of the command, and what is left to do. */
export function endedError(batch: BatchBody): CliError {
  const { id } = batch;
  const answered = batch.output_file_id ? `\nwhat it answered: gw batch results ${id}` : "";
  const errors = batch.error_file_id ? `\nthe lines' errors: gw batch results ${id} --errors` : "";
  switch (batch.status) {
    case "failed": {
      const problems = problemLines(batch);
      return new CliError(
        problems.length > 0
          ? `the batch ${id} failed: its input has problems, and nothing ran:\n${problems.map((problem) => `  ${problem}`).join("\n")}`
          : `the batch ${id} failed${errors || answered ? `${answered}${errors}` : ""}`,
      );
    }
    case "expired":
      return new CliError(`the batch ${id} expired: it did not finish within its 24-hour window${answered}${errors}`);
    case "cancelled":
      return new CliError(`the batch ${id} was cancelled${answered}${errors}`);
    default:
      return new CliError(`the batch ${id} ended ${batch.status}${answered}${errors}`);
  }
}

function stoppedWaiting(id: string, batch: BatchBody | undefined): CliError {
  const state = batch ? ` (${batch.status}, ${countsText(batch)})` : "";
  return new CliError(
    [
      `stopped waiting; the batch ${id} goes on at the gateway${state}.`,
      `  follow it:     gw batch status ${id} --wait`,
      `  its results:   gw batch results ${id}   (once it has ended)`,
      `  cancel it:     gw batch cancel ${id}`,
    ].join("\n"),
    130,
  );
}
