// Runway error bodies ({"error": "<human-readable>"}, https://docs.dev.runwayml.com/errors/errors; a validation failure
// may list `issues` beside it) -> the OpenAI error envelope the video endpoints answer, status
// kept; the vendor's body is kept as `vendorBody`.

import { type UpstreamHttpError, withOpenAIEnvelope } from "../provider-errors.js";
import { readBodyAs } from "../upstream-schema.js";
import { RunwayErrorBody } from "./runway-api.js";

/** Runway asks for backoff on a 429, usually without Retry-After: the pause assumed then. */
export const RUNWAY_RATE_LIMIT_PAUSE_MS = 10_000;

interface RunwayError {
  message: string;
  param?: string;
}

export function fromRunwayHttpError(error: UpstreamHttpError): UpstreamHttpError {
  const vendor = readRunwayError(error.body);
  return withOpenAIEnvelope(
    error,
    { message: vendor?.message ?? `Runway answered HTTP ${error.status}.`, param: vendor?.param, code: `http_${error.status}` },
    { rateLimitPauseMs: RUNWAY_RATE_LIMIT_PAUSE_MS },
  );
}

export function readRunwayError(body: string): RunwayError | undefined {
  const parsed = readBodyAs(RunwayErrorBody, body);
  if (!parsed) return undefined;
  const text = parsed.error;
  const issues = (parsed.issues ?? []).map((issue) => ({
    field: issue.path && issue.path.length > 0 ? issue.path.map(String).join(".") : undefined,
    message: issue.message ?? "is invalid",
  }));
  if (text === undefined && issues.length === 0) return undefined;
  const details = issues.map((issue) => (issue.field ? `${issue.field}: ${issue.message}` : issue.message));
  const vendor: RunwayError = { message: [text, details.join("; ")].filter(Boolean).join(": ") };
  const param = issues[0]?.field;
  if (param) vendor.param = param;
  return vendor;
}
