// Where a followed batch is (`gw batch submit --wait`, `gw batch status --wait`), on stderr:
// - a terminal gets one line rewritten in place at each poll: status, lines done / failed / total,
//   the rate since waiting began (lines a second) and the time left at that rate; erased when
//   waiting ends, so the final line prints clean (docs/decisions.md §17);
// - anything else (a log, CI) a plain line when the status changes, or when the counts do and the
//   last line is at least PLAIN_LINE_GAP_MS old: a long batch does not flood the log.
import { type BatchBody, isEndedBatch } from "../client/batch-types.js";
import type { GwApiError } from "../client/gw-api-error.js";
import { countsText } from "./batch-output.js";
import { clock, span } from "./video-output.js";

export const PLAIN_LINE_GAP_MS = 5000;

export interface BatchProgress {
  update(batch: BatchBody): void;
  retry(error: GwApiError, delaySeconds: number): void;
  end(): void;
}

/** Lines answered (either way) since `since`, a second; undefined before any was. */
export function linesPerSecond(since: { at: number; processed: number }, processed: number, at: number): number | undefined {
  const seconds = (at - since.at) / 1000;
  const lines = processed - since.processed;
  return seconds > 0 && lines > 0 ? lines / seconds : undefined;
}

function processedOf(batch: BatchBody): number {
  return batch.request_counts.completed + batch.request_counts.failed;
}

/** "batch_01J...  in_progress  7 done, 1 failed of 10  2.5 lines/s  ETA 0:01". */
export function progressText(id: string, batch: BatchBody, rate: number | undefined): string {
  const parts = [id, batch.status, countsText(batch)];
  if (rate !== undefined && !isEndedBatch(batch)) {
    parts.push(`${rate < 10 ? rate.toFixed(1) : Math.round(rate)} lines/s`);
    const left = batch.request_counts.total - processedOf(batch);
    if (left > 0) parts.push(`ETA ${clock(left / rate)}`);
  }
  return parts.join("  ");
}

export function batchProgress(id: string, stream: NodeJS.WriteStream = process.stderr, now: () => number = Date.now): BatchProgress {
  const live = Boolean(stream.isTTY);
  let first: { at: number; processed: number } | undefined;
  let last: BatchBody | undefined;
  /** What the last plain line showed, and when. */
  let printed: BatchBody | undefined;
  let printedAt = Number.NEGATIVE_INFINITY;
  let drawn = false;

  const text = (batch: BatchBody): string => {
    const at = now();
    first ??= { at, processed: processedOf(batch) };
    return progressText(id, batch, linesPerSecond(first, processedOf(batch), at));
  };
  const draw = (line: string): void => {
    const room = stream.columns > 1 ? stream.columns - 1 : line.length;
    stream.write(`\r\x1b[2K${line.length > room ? `${line.slice(0, room - 1)}…` : line}`);
    drawn = true;
  };

  return {
    update(batch) {
      const line = text(batch);
      last = batch;
      if (live) return draw(line);
      // The ended state is the waiting command's own final line.
      if (isEndedBatch(batch)) return;
      const statusChanged = batch.status !== printed?.status;
      const countsChanged = printed !== undefined && processedOf(batch) !== processedOf(printed);
      if (statusChanged || (countsChanged && now() - printedAt >= PLAIN_LINE_GAP_MS)) {
        stream.write(`${line}\n`);
        printed = batch;
        printedAt = now();
      }
    },
    retry(error, delaySeconds) {
      const problem = `${error.message}; polling again in ${span(delaySeconds)}`;
      if (live && last) draw(`${text(last)}  (${problem})`);
      else stream.write(`${problem}\n`);
    },
    end() {
      if (drawn) stream.write("\r\x1b[2K");
      drawn = false;
    },
  };
}
