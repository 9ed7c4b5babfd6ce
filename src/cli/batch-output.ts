// How `gw batch status|cancel|list` show batches to people: a batch as labelled lines (each
// timestamp it has in UTC with how long ago, its files, its metadata, its input's problems), the
// list as a table (the id is never cut: the other commands take it).
import { type BatchBody, isEndedBatch } from "../client/batch-types.js";
import { relative, utcTime } from "./video-output.js";

/** Unix seconds (the batch object's times) as ISO 8601. */
function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

function when(seconds: number, now: number): string {
  return `${utcTime(iso(seconds))} (${relative(iso(seconds), now)})`;
}

/** Lines answered and failed out of the total: "7 done, 1 failed of 10". */
export function countsText(batch: Pick<BatchBody, "request_counts">): string {
  const { completed, failed, total } = batch.request_counts;
  return `${completed} done, ${failed} failed of ${total}`;
}

/** The input's problems, one a line: "line 3: This line is not valid JSON. (invalid_json_line)". */
export function problemLines(batch: Pick<BatchBody, "errors">): string[] {
  return (batch.errors?.data ?? []).map((problem) => {
    const where = problem.line === null ? "" : `line ${problem.line}: `;
    const field = problem.param ? `, ${problem.param}` : "";
    return `${where}${problem.message} (${problem.code}${field})`;
  });
}

const TIMES: Array<[string, keyof BatchBody]> = [
  ["created", "created_at"],
  ["started", "in_progress_at"],
  ["finalizing", "finalizing_at"],
  ["cancelling", "cancelling_at"],
  ["completed", "completed_at"],
  ["failed", "failed_at"],
  ["expired", "expired_at"],
  ["cancelled", "cancelled_at"],
];

/** `gw batch status` and `gw batch cancel`: one labelled line per field the batch has. */
export function batchLines(batch: BatchBody, now = Date.now()): string[] {
  const lines: Array<[string, string]> = [
    ["id", batch.id],
    ["status", batch.status],
    ["endpoint", batch.endpoint],
    ["requests", countsText(batch)],
  ];
  for (const [label, field] of TIMES) {
    const value = batch[field];
    if (typeof value === "number") lines.push([label, when(value, now)]);
  }
  if (!isEndedBatch(batch)) lines.push(["expires", when(batch.expires_at, now)]);
  lines.push(["input", batch.input_file_id]);
  if (batch.output_file_id) lines.push(["output", `${batch.output_file_id}  (gw batch results ${batch.id})`]);
  if (batch.error_file_id) lines.push(["errors", `${batch.error_file_id}  (gw batch results ${batch.id} --errors)`]);
  for (const [key, value] of Object.entries(batch.metadata ?? {})) lines.push(["metadata", `${key}=${value}`]);
  for (const problem of problemLines(batch)) lines.push(["problem", problem]);
  return lines.map(([label, value]) => `${label.padEnd(10)} ${value}`);
}

export const BATCH_TABLE_HEADERS = ["ID", "STATUS", "DONE", "FAILED", "TOTAL", "CREATED", "ENDPOINT"];

/** `gw batch list`: a row per batch, created as how long ago. */
export function batchRows(batches: BatchBody[], now = Date.now()): string[][] {
  return batches.map((batch) => [
    batch.id,
    batch.status,
    String(batch.request_counts.completed),
    String(batch.request_counts.failed),
    String(batch.request_counts.total),
    relative(iso(batch.created_at), now),
    batch.endpoint,
  ]);
}
