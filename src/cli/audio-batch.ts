// `gw audio speak --batch FILE`, run as batch-runner.ts says. A line is merged over the flags'
// defaults (the line wins) and may name its file in an `output` field, whose extension asks for
// that format like -o does; otherwise the audio is written as <line>.<ext>. Files are overwritten.
// A result line is {line, status} and, when the line ran, what `--json` prints for one request.
import path from "node:path";
import type { SpeechResult } from "../client/audio-types.js";
import { type SpeechSummary, speechFormatFor, speechSummary, speechTarget } from "./audio-files.js";
import { type BatchLine, type BatchLineResult, type BatchOptions, batchFailure, checkOutputName, runBatch, sendRespectingRateLimit } from "./batch-runner.js";
import { writeOutputFile } from "./output-file.js";

export type SpeechBatchResult = BatchLineResult & Partial<SpeechSummary>;

export function runSpeechBatch(options: BatchOptions<SpeechResult>): Promise<void> {
  return runBatch(options, (item, signal) => runLine(item, options, signal));
}

/** One line, start to end; every failure becomes its result line, never an exception. */
async function runLine(item: BatchLine, options: BatchOptions<SpeechResult>, signal: AbortSignal): Promise<SpeechBatchResult> {
  let summary: Partial<SpeechSummary> = {};
  try {
    const { output, body } = lineRequest(item.body, options.defaults);
    const result = await sendRespectingRateLimit(() => options.send(body), signal);
    summary = speechSummary(result, null);
    const target = speechTarget(result, path.join(options.directory, output ?? String(item.line)));
    await writeOutputFile(target, result.audio);
    return { line: item.line, status: "ok", ...speechSummary(result, target.path) };
  } catch (error) {
    return { line: item.line, ...summary, ...batchFailure(error) };
  }
}

/** The body to send and the line's own file name, if it named one. */
function lineRequest(line: Record<string, unknown>, defaults: Record<string, unknown>): { output: string | undefined; body: Record<string, unknown> } {
  const { output: named, ...fields } = line;
  const output = checkOutputName(named);
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
