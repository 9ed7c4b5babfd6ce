// Brave Search error bodies (https://api-dashboard.search.brave.com/api-reference/web/search/get) -> the OpenAI error envelope:
// {type: "ErrorResponse", error: {id, status, code, detail, meta: {errors?: [{loc, msg, type}]}}}.
// Brave answers a bad token with 422 (SUBSCRIPTION_TOKEN_INVALID), not 401; the status is kept
// (a client error to every rule that reads statuses) and the code tells what it was.

import { isObject } from "../openai-message-parts.js";
import { openaiErrorType, type UpstreamHttpError, withOpenAIEnvelope } from "../provider-errors.js";
import { parseJson } from "../search-text.js";

export function fromBraveHttpError(error: UpstreamHttpError): UpstreamHttpError {
  const parsed = parseJson(error.body);
  const vendor = isObject(parsed) && isObject(parsed.error) ? parsed.error : undefined;
  const code = typeof vendor?.code === "string" && vendor.code !== "" ? vendor.code : undefined;
  const detail = typeof vendor?.detail === "string" && vendor.detail !== "" ? vendor.detail : undefined;
  const problems = isObject(vendor?.meta) && Array.isArray(vendor.meta.errors) ? vendor.meta.errors.filter(isObject) : [];
  const param = problems.map((problem) => fieldOf(problem.loc)).find((field) => field !== undefined) ?? null;

  let message: string;
  let type = openaiErrorType(error.status);
  if (code === "SUBSCRIPTION_TOKEN_INVALID") {
    message = "the Brave subscription token is invalid";
    type = "authentication_error";
  } else if (param === "x-subscription-token") {
    message = "the Brave subscription token is missing";
    type = "authentication_error";
  } else if (error.status === 429) {
    message = `Brave Search rate limit or quota reached${detail ? `: ${detail}` : ""}`;
  } else {
    const listed = problems.map((problem) => (typeof problem.msg === "string" ? `${fieldOf(problem.loc) ?? "request"}: ${problem.msg}` : undefined));
    const details = listed.filter((item): item is string => item !== undefined);
    message = [detail ?? `Brave Search answered HTTP ${error.status}.`, ...details].join("; ");
  }
  return withOpenAIEnvelope(error, { message, type, code: code ?? `http_${error.status}`, param });
}

/** `["header", "x-subscription-token"]` -> `x-subscription-token`; `["query", "q"]` -> `q`. */
function fieldOf(location: unknown): string | undefined {
  if (!Array.isArray(location)) return undefined;
  const names = location.map(String);
  if (["body", "query", "path", "header"].includes(names[0] ?? "")) names.shift();
  return names.length > 0 ? names.join(".") : undefined;
}
