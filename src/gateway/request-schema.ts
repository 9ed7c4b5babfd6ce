// Parsing a tool endpoint's JSON body with its zod schema: the first issue becomes a 400 in the
// gateway envelope that names the parameter (JSON path), and says "Missing" for an absent one.
import type { z } from "zod";
import { formatJsonPath } from "../config/config-error.js";
import { InvalidRequestError } from "./errors.js";

/**
 * A body read with its schema, or the first issue found in it. The issue carries its `input`,
 * which zod 4 leaves off by default and by which "missing" is told apart; asking for it doubles
 * the cost of every parse, so only a refused body is parsed again with it.
 */
export function parseOrFirstIssue<Schema extends z.ZodType>(
  schema: Schema,
  body: unknown,
): { success: true; data: z.output<Schema> } | { success: false; issue: z.core.$ZodIssue } {
  const result = schema.safeParse(body);
  if (result.success) return { success: true, data: result.data };
  const described = schema.safeParse(body, { reportInput: true });
  return { success: false, issue: described.error?.issues[0] ?? result.error.issues[0]! };
}

/** Parse a body, turning the first issue into a 400 that names the parameter. */
export function parseWithSchema<Schema extends z.ZodType>(schema: Schema, body: Record<string, unknown>, at?: string): z.output<Schema> {
  const result = parseOrFirstIssue(schema, body);
  if (result.success) return result.data;
  const { issue } = result;
  // An unknown field is named like any other bad one (zod reports it on the object holding it).
  const path = issue.code === "unrecognized_keys" && issue.keys[0] !== undefined ? [...issue.path, issue.keys[0]] : issue.path;
  const inner = formatJsonPath(path);
  const param = at === undefined ? inner : inner ? `${at}.${inner}` : at;
  if (!param) throw new InvalidRequestError(`Invalid request body: ${issue.message}`);
  const missing = issue.code === "invalid_type" && issue.input === undefined;
  if (issue.code === "unrecognized_keys") throw new InvalidRequestError(`Unknown parameter: '${param}'.`, { param });
  throw new InvalidRequestError(missing ? `Missing required parameter: '${param}'.` : `Invalid '${param}': ${issue.message}.`, { param });
}
