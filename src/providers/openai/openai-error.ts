// OpenAI error answers on the Images API (https://platform.openai.com/docs/guides/error-codes). Moderation blocks are the
// model declining to draw, which the gateway answers as a refusal (200, empty data), not an error. Anything else keeps
// OpenAI's own envelope (it is already the gateway's shape), or gets one built from the status
// when the body is not one (a proxy's HTML page).

import { isObject } from "../openai-message-parts.js";
import { UpstreamHttpError } from "../provider-errors.js";

const REFUSAL_CODES = new Set(["moderation_blocked", "content_policy_violation"]);

/** The refusal text when the error is a moderation block, else undefined. */
export function openaiImageRefusal(error: UpstreamHttpError): string | undefined {
  if (error.status !== 400) return undefined;
  const vendor = readError(error.body);
  if (!vendor || typeof vendor.code !== "string" || !REFUSAL_CODES.has(vendor.code)) return undefined;
  return typeof vendor.message === "string" && vendor.message.length > 0 ? vendor.message : "The request was rejected by OpenAI's safety system.";
}

/** The same failure with the OpenAI envelope as `body` and the raw answer as `vendorBody`. */
export function fromOpenAIHttpError(error: UpstreamHttpError): UpstreamHttpError {
  const vendor = readError(error.body);
  const body = vendor && typeof vendor.message === "string" ? error.body : envelope(error.status);
  return new UpstreamHttpError(error.provider, error.status, body, "application/json", error.retryAfterMs, error.body, error.request);
}

function envelope(status: number): string {
  const type = status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
  return JSON.stringify({ error: { message: `OpenAI answered HTTP ${status}.`, type, param: null, code: `http_${status}` } });
}

function readError(body: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    return isObject(parsed) && isObject(parsed.error) ? parsed.error : undefined;
  } catch {
    return undefined;
  }
}
