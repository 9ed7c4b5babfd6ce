// Google RPC error bodies ({error:{code, message, status, details}}, https://ai.google.dev/gemini-api/docs/troubleshooting) -> the OpenAI
// error envelope the chat endpoint returns verbatim. The vendor body is kept as `vendorBody`.

import { parseJson } from "../../json/json-values.js";
import { UpstreamHttpError, withOpenAIEnvelope } from "../provider-errors.js";
import { readAs } from "../upstream-schema.js";
import { GoogleErrorBody, type GoogleErrorDetail } from "./gemini-api.js";

interface GoogleError {
  message?: string;
  status?: string;
  code?: number;
  reason?: string;
  retryDelayMs?: number;
}

export function fromGeminiHttpError(error: UpstreamHttpError): UpstreamHttpError {
  const google = readGoogleError(error.body);
  // Gemini answers a bad API key with 400; it is the operator's key, not the caller's request.
  const status = google.reason === "API_KEY_INVALID" ? 401 : error.status;
  const message = google.message ?? `Gemini answered HTTP ${error.status}.`;
  return withOpenAIEnvelope(error, { message, code: codeOf(status, google) }, { status, retryAfterMs: google.retryDelayMs });
}

/** A `{"error":{...}}` chunk inside a 200 stream, reported as the HTTP error it stands for. */
export function fromGeminiStreamError(provider: string, data: string): UpstreamHttpError {
  const google = readGoogleError(data);
  const status = google.code && google.code >= 400 ? google.code : 500;
  // The chunk stands for the upstream's error body: the envelope keeps it as `vendorBody`.
  const chunk = new UpstreamHttpError({ provider, status, body: data, contentType: "application/json" });
  return withOpenAIEnvelope(
    chunk,
    { message: google.message ?? "The Gemini stream failed.", code: codeOf(status, google) },
    { retryAfterMs: google.retryDelayMs },
  );
}

function codeOf(status: number, google: GoogleError): string {
  return google.reason === "API_KEY_INVALID" ? "invalid_api_key" : (google.status ?? `http_${status}`).toLowerCase();
}

export function readGoogleError(body: string): GoogleError {
  const parsed = parseJson(body);
  // streamGenerateContent without alt=sse wraps bodies in an array.
  const error = readAs(GoogleErrorBody, Array.isArray(parsed) ? parsed[0] : parsed)?.error;
  if (!error) return {};
  const details = error.details ?? [];
  return {
    message: error.message,
    status: error.status,
    code: error.code,
    reason: details.map((detail) => detail.reason).find((reason) => reason !== undefined),
    retryDelayMs: retryDelay(details),
  };
}

/** google.rpc.RetryInfo's `retryDelay` ("37s", "0.5s"), which 429s carry instead of Retry-After. */
function retryDelay(details: readonly GoogleErrorDetail[]): number | undefined {
  const info = details.find((detail) => String(detail["@type"]).endsWith("google.rpc.RetryInfo"));
  const match = info?.retryDelay === undefined ? null : /^(\d+(?:\.\d+)?)s$/.exec(info.retryDelay);
  return match ? Math.round(Number(match[1]) * 1000) : undefined;
}
