// `gw batch submit`: the input (a JSONL file, stdin, or prompts written as JSONL by
// batch-prompts.ts) uploaded as a file of purpose `batch`, then the batch created from it. An
// input refused before any batch was made from it (a bad endpoint or metadata) is deleted again,
// so it does not sit in the agent's storage and quota.

import { promises as fs } from "node:fs";
import path from "node:path";
import type { BatchBody } from "../client/batch-types.js";
import type { BatchesClient } from "../client/batches-client.js";
import { GwApiError } from "../client/gw-api-error.js";
import type { GwClient } from "../client/gw-client.js";
import type { UploadSource } from "../client/storage-types.js";
import { type PromptSettings, promptsToBatchInput } from "./batch-prompts.js";
import { CliError, UsageError } from "./cli-error.js";
import { checkLocalFiles, fileSource } from "./local-files.js";
import { readStdinBytes } from "./stdin.js";
import { transferProgress } from "./transfer-progress.js";

const JSONL_TYPE = "application/jsonl";
/** What stdin may hold when the gateway does not say its per-file limit (the default storage.maxFileBytes). */
const DEFAULT_MAX_FILE_BYTES = 50 * 1024 * 1024;

/** `key=value` pairs of --metadata as the batch's metadata; a pair not of that form is a usage error. */
export function metadataOf(pairs: readonly string[] | undefined): Record<string, string> | undefined {
  if (!pairs || pairs.length === 0) return undefined;
  const metadata: Record<string, string> = {};
  for (const pair of pairs) {
    const separator = pair.indexOf("=");
    if (separator <= 0) throw new UsageError(`--metadata takes key=value; got "${pair}"`);
    const key = pair.slice(0, separator);
    if (key in metadata) throw new UsageError(`--metadata ${key} is given twice`);
    metadata[key] = pair.slice(separator + 1);
  }
  return metadata;
}

/** A JSONL file on disk (checked before anything is sent), or stdin for `-`, as the upload's source. */
export async function jsonlInput(file: string, client: GwClient): Promise<UploadSource> {
  if (file === "-") return memorySource("stdin.jsonl", await readStdinBytes(await stdinLimit(client), "JSON lines", "the input"));
  const [checked] = await checkLocalFiles([file]);
  if (!checked) throw new CliError(`${file}: no such file`);
  return fileSource(checked, JSONL_TYPE, (sizeBytes) => transferProgress(`uploading ${file}`, sizeBytes));
}

/** The prompts file (or stdin for `-`) written as the Batch API's JSONL (batch-prompts.ts). */
export async function promptsInput(file: string, settings: PromptSettings): Promise<UploadSource> {
  const text = file === "-" ? (await readStdinBytes(DEFAULT_MAX_FILE_BYTES, "prompts", "the prompts")).toString("utf8") : await readPrompts(file);
  const name = file === "-" ? "prompts" : path.basename(file, path.extname(file));
  return memorySource(`${name}.jsonl`, Buffer.from(promptsToBatchInput(text, settings, file === "-" ? "stdin" : file)));
}

async function readPrompts(file: string): Promise<string> {
  const [checked] = await checkLocalFiles([file]);
  if (!checked) throw new CliError(`${file}: no such file`);
  return fs.readFile(checked.path, "utf8");
}

/** The gateway's per-file limit, for stdin, which is held in memory to be sent with its length. */
async function stdinLimit(client: GwClient): Promise<number> {
  try {
    return (await client.storageLimits()).maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  } catch {
    // The upload itself will say what is wrong with the gateway.
    return DEFAULT_MAX_FILE_BYTES;
  }
}

function memorySource(filename: string, bytes: Buffer): UploadSource {
  return {
    filename,
    contentType: JSONL_TYPE,
    sizeBytes: bytes.length,
    open: async function* () {
      yield bytes;
    },
  };
}

/** Upload the input and create the batch (its 24-hour window is the only one); the created batch, perhaps `failed`. */
export async function submitBatch(
  batches: BatchesClient,
  source: UploadSource,
  request: { endpoint: string; metadata?: Record<string, string> },
): Promise<BatchBody> {
  const input = await batches.uploadInput(source);
  try {
    return await batches.create({ input_file_id: input.id, endpoint: request.endpoint, completion_window: "24h", metadata: request.metadata ?? null });
  } catch (error) {
    // Only a refusal: after a lost connection the batch may well exist, and needs its input.
    if (error instanceof GwApiError && error.status >= 400 && error.status < 500) await batches.deleteFile(input.id).catch(() => undefined);
    throw error;
  }
}
