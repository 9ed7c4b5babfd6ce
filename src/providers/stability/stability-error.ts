// Stability error bodies ({id, name, errors: [...]}, https://platform.stability.ai/docs/api-reference) -> the OpenAI error
// envelope the image endpoints return verbatim; the vendor's body is kept as `vendorBody`.
// A 403 `content_moderation` is the model declining to draw: a refusal, not an error.

import { type UpstreamHttpError, withOpenAIEnvelope } from "../provider-errors.js";
import { readBodyAs } from "../upstream-schema.js";
import { StabilityErrorBody } from "./stability-api.js";

interface StabilityError {
  id?: string;
  name?: string;
  errors: string[];
}

/** Stability times a client out for 60 s after too many requests, often without Retry-After. */
const RATE_LIMIT_PAUSE_MS = 60_000;

/** The refusal when the error is a moderation block, else undefined. Reads the vendor's own body. */
export function stabilityRefusal(error: UpstreamHttpError): { refusal: string; id?: string } | undefined {
  if (error.status !== 403) return undefined;
  const vendor = readStabilityError(error.vendorBody ?? error.body);
  if (vendor?.name !== "content_moderation") return undefined;
  const refusal = vendor.errors.join(" ") || "Your request was flagged by Stability's content moderation system.";
  return vendor.id ? { refusal, id: vendor.id } : { refusal };
}

export function fromStabilityHttpError(error: UpstreamHttpError): UpstreamHttpError {
  const vendor = readStabilityError(error.body);
  const message = vendor && vendor.errors.length > 0 ? vendor.errors.join("; ") : `Stability answered HTTP ${error.status}.`;
  return withOpenAIEnvelope(
    error,
    { message, param: vendor ? paramOf(vendor.errors) : null, code: vendor?.name ?? `http_${error.status}` },
    { rateLimitPauseMs: RATE_LIMIT_PAUSE_MS },
  );
}

export function readStabilityError(body: string): StabilityError | undefined {
  const parsed = readBodyAs(StabilityErrorBody, body);
  if (!parsed) return undefined;
  const vendor: StabilityError = { errors: parsed.errors ?? [] };
  if (parsed.id !== undefined) vendor.id = parsed.id;
  if (parsed.name !== undefined) vendor.name = parsed.name;
  return vendor.name || vendor.errors.length > 0 ? vendor : undefined;
}

/** Stability names the field first (`aspect_ratio: must be one of ...`). */
function paramOf(errors: readonly string[]): string | null {
  const match = /^([a-z][a-z0-9_]*): /.exec(errors[0] ?? "");
  return match?.[1] ?? null;
}
