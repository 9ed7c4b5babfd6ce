// OpenAI error answers (https://platform.openai.com/docs/guides/error-codes). Moderation blocks on the Images API are the
// model declining to draw, which the gateway answers as a refusal (200, empty data), not an error. Anything else keeps
// OpenAI's own envelope (it is already the gateway's shape), or gets one built from the status
// when the body is not one (a proxy's HTML page).

import { UpstreamHttpError } from "../provider-errors.js";
import { readBodyAs } from "../upstream-schema.js";
import { OpenAIErrorBody } from "./openai-api.js";

const REFUSAL_CODES = new Set(["moderation_blocked", "content_policy_violation"]);

/** The refusal text when the error is a moderation block, else undefined. Reads the vendor's own body. */
export function openaiImageRefusal(error: UpstreamHttpError): string | undefined {
  if (error.status !== 400) return undefined;
  const vendor = readBodyAs(OpenAIErrorBody, error.vendorBody ?? error.body)?.error;
  if (vendor?.code === undefined || !REFUSAL_CODES.has(vendor.code)) return undefined;
  return vendor.message || "The request was rejected by OpenAI's safety system.";
}

/** The same failure with the OpenAI envelope as `body` and the raw answer as `vendorBody`. */
export function fromOpenAIHttpError(error: UpstreamHttpError): UpstreamHttpError {
  const vendor = readBodyAs(OpenAIErrorBody, error.body)?.error;
  const body = vendor?.message !== undefined ? error.body : envelope(error.status);
  const { provider, status, retryAfterMs, request } = error;
  return new UpstreamHttpError({ provider, status, body, contentType: "application/json", retryAfterMs, vendorBody: error.body, request });
}

function envelope(status: number): string {
  const type = status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
  return JSON.stringify({ error: { message: `OpenAI answered HTTP ${status}.`, type, param: null, code: `http_${status}` } });
}
