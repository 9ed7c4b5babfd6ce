// Anthropic error bodies ({type:"error", error:{type, message}}, https://platform.claude.com/docs/en/api/errors) -> the OpenAI error
// envelope the chat endpoint returns verbatim. The vendor body is kept for the messages endpoint.

import { UpstreamHttpError } from "../provider-errors.js";
import { readBodyAs } from "../upstream-schema.js";
import { AnthropicErrorBody } from "./anthropic-api.js";

// Maps: the type is upstream text, and `constructor` must not find Object's.
const STATUS_BY_TYPE = new Map<string, number>([
  ["invalid_request_error", 400],
  ["authentication_error", 401],
  ["billing_error", 402],
  ["permission_error", 403],
  ["not_found_error", 404],
  ["request_too_large", 413],
  ["rate_limit_error", 429],
  ["api_error", 500],
  ["timeout_error", 504],
  ["overloaded_error", 529],
]);

const OPENAI_TYPE_BY_TYPE = new Map<string, string>([
  ["not_found_error", "invalid_request_error"],
  ["request_too_large", "invalid_request_error"],
  ["billing_error", "insufficient_quota"],
  ["api_error", "server_error"],
  ["timeout_error", "server_error"],
  ["overloaded_error", "server_error"],
]);

/** The same failure, with the OpenAI envelope as `body` and Anthropic's own body as `vendorBody`. */
export function fromAnthropicHttpError(error: UpstreamHttpError): UpstreamHttpError {
  const vendor = readError(error.body);
  const type = vendor.type ?? typeForStatus(error.status);
  const message = vendor.message ?? `Anthropic answered HTTP ${error.status}.`;
  const { provider, status, retryAfterMs, request } = error;
  return new UpstreamHttpError({
    provider,
    status,
    body: envelope(message, type),
    contentType: "application/json",
    retryAfterMs,
    vendorBody: error.body,
    request,
  });
}

/**
 * An `error` event inside a 200 stream (overloaded mid-answer ...). Reported as the HTTP error
 * its type stands for, so the gateway retries it (5xx, 429) or returns it (4xx) like any other.
 */
export function fromAnthropicStreamError(provider: string, data: string): UpstreamHttpError {
  const vendor = readError(data);
  const type = vendor.type ?? "api_error";
  const status = STATUS_BY_TYPE.get(type) ?? 500;
  const body = envelope(vendor.message ?? "The Anthropic stream failed.", type);
  return new UpstreamHttpError({ provider, status, body, contentType: "application/json", vendorBody: data });
}

function envelope(message: string, type: string): string {
  return JSON.stringify({ error: { message, type: OPENAI_TYPE_BY_TYPE.get(type) ?? type, param: null, code: type } });
}

/** Not JSON (a proxy's HTML page for 413 or 502 ...): described from the status alone. */
function readError(body: string): { type?: string; message?: string } {
  return readBodyAs(AnthropicErrorBody, body)?.error ?? {};
}

function typeForStatus(status: number): string {
  const entry = [...STATUS_BY_TYPE].find(([, value]) => value === status);
  if (entry) return entry[0];
  return status >= 500 ? "api_error" : "invalid_request_error";
}
