// `--batch FILE` for the image commands, run as batch-runner.ts says. A line is merged over the
// flags' defaults (the line wins) and may name its file stem in an `output` field, whose extension
// asks for that format like -o does; otherwise pictures are written as <line>-<index>.<ext>.
// Files are overwritten: the directory is the user's choice, and a re-run must not stall.
import path from "node:path";
import type { ImageResultBody } from "../client/image-types.js";
import { type BatchLine, type BatchLineResult, type BatchOptions, batchFailure, checkOutputName, runBatch, sendRespectingRateLimit } from "./batch-runner.js";
import { extensionOf, pictureTargets } from "./image-files.js";
import { emptyResultError, outputFormatFor } from "./image-options.js";
import { type OutputTarget, writeOutputFile } from "./output-file.js";

export interface BatchResult extends BatchLineResult {
  /** The generation id (the request id in the gateway's logs). */
  id?: string;
  model?: string;
  asset_ids?: string[];
  files?: string[];
}

export function runImageBatch(options: BatchOptions<ImageResultBody>): Promise<void> {
  return runBatch(options, (item, signal) => runLine(item, options, signal));
}

/** One line, start to end; every failure becomes its result line, never an exception. */
async function runLine(item: BatchLine, options: BatchOptions<ImageResultBody>, signal: AbortSignal): Promise<BatchResult> {
  const result: BatchResult = { line: item.line, status: "ok" };
  try {
    const { output, body } = lineRequest(item.body, options.defaults);
    const answer = await sendRespectingRateLimit(() => options.send(body), signal);
    result.id = answer.id;
    result.model = answer.model;
    result.asset_ids = answer.data.flatMap((picture) => (picture.asset_id ? [picture.asset_id] : []));
    const empty = emptyResultError(answer);
    if (empty) throw empty;
    const targets: OutputTarget[] =
      output === undefined
        ? answer.data.map((picture, index) => ({
            path: path.join(options.directory, `${item.line}-${index + 1}.${extensionOf(picture.media_type)}`),
            exclusive: false,
          }))
        : pictureTargets(answer.data, path.join(options.directory, output));
    result.files = [];
    for (const [index, picture] of answer.data.entries()) {
      await writeOutputFile(targets[index]!, Buffer.from(picture.b64_json, "base64"));
      result.files.push(targets[index]!.path);
    }
    return result;
  } catch (error) {
    return { ...result, ...batchFailure(error) };
  }
}

/** The body to send and the line's own file stem, if it named one. */
function lineRequest(line: Record<string, unknown>, defaults: Record<string, unknown>): { output: string | undefined; body: Record<string, unknown> } {
  const { output: named, ...fields } = line;
  const output = checkOutputName(named);
  const body = { ...defaults, ...fields };
  const lineFormat = typeof fields.output_format === "string" ? fields.output_format : undefined;
  const format = outputFormatFor(lineFormat, output, { format: "output_format", target: "output" });
  if (format !== undefined) body.output_format = format;
  return { output, body };
}
