// Validation of what clients send to the storage endpoints: the presigned-upload body and the
// list query. Every failure is a 400 naming the field.
import { z } from "zod";
import { normalizeContentType } from "./content-type.js";
import { normalizeFilename } from "./file-name.js";
import { StorageRequestError } from "./storage-errors.js";

export interface PresignRequest {
  filename: string;
  contentType: string;
  sizeBytes: number;
}

const presignSchema = z.object({
  // No length cap here: the body is capped, and a long name is shortened, not refused.
  filename: z.string({ error: "filename must be a string" }).min(1, "filename must not be empty"),
  contentType: z.string({ error: "contentType must be a string" }),
  sizeBytes: z
    .number({ error: "sizeBytes must be a number" })
    .int("sizeBytes must be a whole number of bytes")
    .nonnegative("sizeBytes must not be negative")
    .max(Number.MAX_SAFE_INTEGER),
});

/** POST /v1/storage/presigned-upload as a client may send it. */
export type PresignRequestInput = z.input<typeof presignSchema>;

export function parsePresignRequest(body: Record<string, unknown>): PresignRequest {
  const result = presignSchema.safeParse(body);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = issue.path.join(".");
    throw new StorageRequestError(
      issue.code === "invalid_type" && body[field] === undefined ? `${field} is required.` : `${issue.message}.`,
      "invalid_parameter",
    );
  }
  const contentType = normalizeContentType(result.data.contentType);
  if (contentType === null)
    throw new StorageRequestError("contentType must be a MIME type such as image/png or application/octet-stream.", "invalid_parameter");
  return { filename: normalizeFilename(result.data.filename), contentType, sizeBytes: result.data.sizeBytes };
}

export interface ListQuery {
  page: number;
  limit: number;
}

export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 100;

/** page: default 1, at least 1; limit: default 50, 1 to 100. Anything else is a 400, never clamped. */
export function parseListQuery(query: URLSearchParams): ListQuery {
  return {
    page: integerParameter(query, "page", 1, 1, Number.MAX_SAFE_INTEGER),
    limit: integerParameter(query, "limit", LIST_DEFAULT_LIMIT, 1, LIST_MAX_LIMIT),
  };
}

function integerParameter(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const values = query.getAll(name);
  if (values.length === 0) return fallback;
  const raw = values[0]!.trim();
  const value = Number(raw);
  if (values.length > 1 || raw === "" || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `a whole number of at least ${min}` : `a whole number from ${min} to ${max}`;
    throw new StorageRequestError(`${name} must be ${range}.`, "invalid_parameter");
  }
  return value;
}
