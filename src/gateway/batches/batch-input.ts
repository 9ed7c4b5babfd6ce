// A batch's input file, read as OpenAI defines it: JSON Lines, one request per line,
// `{"custom_id", "method": "POST", "url", "body"}`. Checked whole before anything runs (every
// problem listed with its line, as OpenAI's batch `errors`), and read again, line by line, by
// whoever runs the batch (after a restart too): nothing of it is held in memory at once.

import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { BatchInputError } from "../../store/batch-records.js";
import { GatewayError } from "../errors.js";
import type { ParsedLine } from "./batch-endpoints.js";

/** One request line: its position among the file's lines (from 0; blank lines count), its id and body. */
export interface BatchInputLine {
  index: number;
  customId: string;
  body: Record<string, unknown>;
}

/** The most problems one refusal lists; the count says how many there were. */
const MAX_LISTED_ERRORS = 100;
const MAX_CUSTOM_ID_LENGTH = 512;

/** Every line of the file with its index; blank lines are skipped (they count for the line numbers). */
export async function* fileLines(body: Readable): AsyncGenerator<{ index: number; text: string }> {
  const lines = createInterface({ input: body, crlfDelay: Number.POSITIVE_INFINITY });
  let index = 0;
  try {
    for await (const text of lines) {
      if (text.trim() !== "") yield { index, text };
      index += 1;
    }
  } finally {
    lines.close();
    body.destroy();
  }
}

/** A line's request, or the problem with it (the line's JSON and envelope only; its body is the endpoint's to check). */
export function readLine(index: number, text: string, endpoint: string): BatchInputLine | BatchInputError {
  const problem = (code: string, message: string, param: string | null = null): BatchInputError => ({ code, message, param, line: index + 1 });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return problem("invalid_json_line", "This line is not valid JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return problem("invalid_request", "This line is not a JSON object.");
  const { custom_id: customId, method, url, body } = value as Record<string, unknown>;
  if (typeof customId !== "string" || customId === "") return problem("missing_required_parameter", "custom_id must be a non-empty string.", "custom_id");
  if (customId.length > MAX_CUSTOM_ID_LENGTH) return problem("invalid_value", `custom_id is longer than ${MAX_CUSTOM_ID_LENGTH} characters.`, "custom_id");
  if (method !== "POST") return problem("invalid_value", 'method must be "POST".', "method");
  if (url !== endpoint) return problem("invalid_url", `url must be the batch's endpoint, ${endpoint}.`, "url");
  if (typeof body !== "object" || body === null || Array.isArray(body)) return problem("missing_required_parameter", "body must be a JSON object.", "body");
  return { index, customId, body: body as Record<string, unknown> };
}

export function isInputError(line: BatchInputLine | BatchInputError): line is BatchInputError {
  return "code" in line;
}

/**
 * Check every line before anything runs: its JSON and envelope, `custom_id` unique, its body as
 * the endpoint's own parser reads it and its model as a call would route it (`parse` throws the
 * live endpoint's 400, 403 or 404). The number of request lines, and the problems found.
 */
export async function checkInput(
  body: Readable,
  endpoint: string,
  parse: (line: BatchInputLine) => ParsedLine,
  maxLines: number,
): Promise<{ total: number; errors: BatchInputError[]; errorCount: number }> {
  const errors: BatchInputError[] = [];
  let errorCount = 0;
  const report = (error: BatchInputError) => {
    errorCount += 1;
    if (errors.length < MAX_LISTED_ERRORS) errors.push(error);
  };
  const seen = new Set<string>();
  let total = 0;
  for await (const { index, text } of fileLines(body)) {
    total += 1;
    const line = readLine(index, text, endpoint);
    if (isInputError(line)) {
      report(line);
      continue;
    }
    if (seen.has(line.customId)) {
      report({ code: "duplicate_custom_id", message: `custom_id "${line.customId}" is used by an earlier line.`, param: "custom_id", line: index + 1 });
      continue;
    }
    seen.add(line.customId);
    try {
      parse(line);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      report({ code: error.code, message: error.message, param: error.param === undefined ? "body" : `body.${error.param}`, line: index + 1 });
    }
  }
  if (total === 0) report({ code: "empty_file", message: "The input file has no request lines.", param: null, line: null });
  if (total > maxLines)
    report({ code: "too_many_requests", message: `A batch holds at most ${maxLines} requests; this file has ${total}.`, param: null, line: null });
  return { total, errors, errorCount };
}
