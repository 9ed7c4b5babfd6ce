// `gw batch results`: which of a batch's files to read, or why there is none to read yet.
import { type BatchBody, isEndedBatch } from "../client/batch-types.js";
import { countsText } from "./batch-output.js";
import { CliError } from "./cli-error.js";

/** The id of the batch's output file (`output`) or error file (`errors`); a CliError saying why when it has none. */
export function resultsFileOf(batch: BatchBody, kind: "output" | "errors"): string {
  const { id } = batch;
  if (!isEndedBatch(batch))
    throw new CliError(`the batch ${id} is ${batch.status} (${countsText(batch)}); its results come when it ends: gw batch status ${id} --wait`);
  const fileId = kind === "output" ? batch.output_file_id : batch.error_file_id;
  if (fileId) return fileId;
  if (batch.status === "failed" && batch.errors)
    throw new CliError(`the batch ${id} failed before any line ran, so it has no results; its input's problems: gw batch status ${id}`);
  if (kind === "errors") throw new CliError(`the batch ${id} has no error file: no line failed (${countsText(batch)})`);
  const errors = batch.error_file_id ? `; the lines' errors: gw batch results ${id} --errors` : "";
  throw new CliError(`the batch ${id} has no output file: no line was answered (${countsText(batch)})${errors}`);
}
