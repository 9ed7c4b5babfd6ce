// Parsing a tool endpoint's JSON body with its zod schema: the first issue becomes a 400 in the
// gateway envelope that names the parameter (JSON path), and says "Missing" for an absent one.
import type { z } from "zod";
import { formatJsonPath } from "../config/config-error.js";
import { InvalidRequestError } from "./errors.js";

/** Parse a body, turning the first issue into a 400 that names the parameter. */
export function parseWithSchema<Schema extends z.ZodType>(schema: Schema, body: Record<string, unknown>, at?: string): z.output<Schema> {
  // reportInput: zod 4 leaves `input` off issues by default, and "missing" is told apart by it.
  const result = schema.safeParse(body, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  // An unknown field is named like any other bad one (zod reports it on the object holding it).
  const path = issue.code === "unrecognized_keys" && issue.keys[0] !== undefined ? [...issue.path, issue.keys[0]] : issue.path;
  const inner = formatJsonPath(path);
  const param = at === undefined ? inner : inner ? `${at}.${inner}` : at;
  if (!param) throw new InvalidRequestError(`Invalid request body: ${issue.message}`);
  const missing = issue.code === "invalid_type" && issue.input === undefined;
  if (issue.code === "unrecognized_keys") throw new InvalidRequestError(`Unknown parameter: '${param}'.`, { param });
  throw new InvalidRequestError(missing ? `Missing required parameter: '${param}'.` : `Invalid '${param}': ${issue.message}.`, { param });
}
