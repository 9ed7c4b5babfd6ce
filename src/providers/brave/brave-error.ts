// Brave Search error bodies (https://api-dashboard.search.brave.com/api-reference/web/search/get) -> the OpenAI error envelope:
// {type: "ErrorResponse", error: {id, status, code, detail, meta: {errors?: [{loc, msg, type}]}}}.
// Brave answers a bad token with 422 (SUBSCRIPTION_TOKEN_INVALID), not 401; the status is kept
// (a client error to every rule that reads statuses) and the code tells what it was.

import { openaiErrorType, type UpstreamHttpError, withOpenAIEnvelope } from "../provider-errors.js";
import { readBodyAs, validationField } from "../upstream-schema.js";
import { BraveErrorBody } from "./brave-api.js";

export function fromBraveHttpError(error: UpstreamHttpError): UpstreamHttpError {
  const vendor = readBodyAs(BraveErrorBody, error.body)?.error;
  const code = vendor?.code;
  const detail = vendor?.detail;
  const problems = vendor?.meta?.errors ?? [];
  const param = problems.map((problem) => validationField(problem.loc)).find((field) => field !== undefined) ?? null;

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
    const listed = problems.map((problem) => (problem.msg === undefined ? undefined : `${validationField(problem.loc) ?? "request"}: ${problem.msg}`));
    const details = listed.filter((item): item is string => item !== undefined);
    message = [detail ?? `Brave Search answered HTTP ${error.status}.`, ...details].join("; ");
  }
  return withOpenAIEnvelope(error, { message, type, code: code ?? `http_${error.status}`, param });
}
