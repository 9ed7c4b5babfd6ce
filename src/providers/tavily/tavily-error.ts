// Tavily error bodies (https://docs.tavily.com/api-reference/endpoint/search) -> the OpenAI error envelope: {detail: {error}}
// (what its SDK reads), FastAPI's {detail: "..."} or {detail: [{loc, msg}]}. The status is kept:
// 401 bad key, 429 rate limit, 432 plan limit, 433 pay-as-you-go limit.

import { type UpstreamHttpError, withOpenAIEnvelope } from "../provider-errors.js";
import { readAs, readBodyAs, ValidationList } from "../upstream-schema.js";
import { TavilyErrorBody } from "./tavily-api.js";

const BY_STATUS: Record<number, { code: string; message: string; type?: string }> = {
  401: { code: "invalid_api_key", message: "the Tavily API key is missing or invalid" },
  429: { code: "rate_limit_exceeded", message: "Tavily's rate limit was reached" },
  432: { code: "plan_limit_exceeded", message: "the Tavily plan's usage limit is exceeded", type: "insufficient_quota" },
  433: { code: "pay_as_you_go_limit_exceeded", message: "the Tavily pay-as-you-go spending limit is exceeded", type: "insufficient_quota" },
};

export function fromTavilyHttpError(error: UpstreamHttpError): UpstreamHttpError {
  const vendorMessage = readTavilyError(error.body);
  const known = BY_STATUS[error.status];
  const message = known ? (vendorMessage ? `${known.message}: ${vendorMessage}` : known.message) : (vendorMessage ?? `Tavily answered HTTP ${error.status}.`);
  return withOpenAIEnvelope(error, { message, type: known?.type, code: known?.code ?? `http_${error.status}` });
}

export function readTavilyError(body: string): string | undefined {
  const parsed = readBodyAs(TavilyErrorBody, body);
  if (!parsed) return undefined;
  const { detail } = parsed;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    const listed = (readAs(ValidationList, detail) ?? []).flatMap((item) => (item.msg === undefined ? [] : [item.msg]));
    if (listed.length > 0) return listed.join("; ");
  } else if (detail?.error !== undefined) return detail.error;
  return parsed.error;
}
