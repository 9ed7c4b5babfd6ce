// ElevenLabs error bodies (https://elevenlabs.io/docs/api-reference) -> the OpenAI error envelope the audio endpoints
// answer; the vendor's body is kept as `vendorBody`. Two shapes: FastAPI's validation list
// {detail: [{loc, msg, type}]} (422) and {detail: {status, message}} for the rest.
//
// The status is kept, 422 included: it is a client error to every rule that reads statuses (no
// retry, no fallback, passed back as it is), and it tells a caller the body failed validation
// upstream rather than in the gateway.

import { isObject } from "../openai-message-parts.js";
import { type UpstreamHttpError, withOpenAIEnvelope } from "../provider-errors.js";
import { parseJsonObject } from "../sse.js";

interface ElevenLabsError {
  message: string;
  code?: string;
  param?: string;
}

export function fromElevenLabsHttpError(error: UpstreamHttpError): UpstreamHttpError {
  const vendor = readElevenLabsError(error.body);
  return withOpenAIEnvelope(error, {
    message: vendor?.message ?? `ElevenLabs answered HTTP ${error.status}.`,
    param: vendor?.param,
    code: vendor?.code ?? `http_${error.status}`,
  });
}

export function readElevenLabsError(body: string): ElevenLabsError | undefined {
  const detail = parseJsonObject(body)?.detail;
  if (typeof detail === "string" && detail !== "") return { message: detail };
  if (isObject(detail) && typeof detail.message === "string") {
    return typeof detail.status === "string" ? { message: detail.message, code: detail.status } : { message: detail.message };
  }
  if (Array.isArray(detail)) return fromValidationList(detail.filter(isObject));
  return undefined;
}

/** `body.text: field required; body.model_id: ...`, the first field as `param`, its type as `code`. */
function fromValidationList(items: Record<string, unknown>[]): ElevenLabsError | undefined {
  const problems = items.map((item) => ({ field: fieldOf(item.loc), message: typeof item.msg === "string" ? item.msg : "is invalid", type: item.type }));
  const [first] = problems;
  if (!first) return undefined;
  const vendor: ElevenLabsError = { message: problems.map((problem) => (problem.field ? `${problem.field}: ${problem.message}` : problem.message)).join("; ") };
  if (first.field) vendor.param = first.field;
  if (typeof first.type === "string") vendor.code = first.type;
  return vendor;
}

/** FastAPI's location (`["body", "voice_settings", "speed"]`) without where it was (body, query, path). */
function fieldOf(location: unknown): string | undefined {
  if (!Array.isArray(location)) return undefined;
  const names = location.map(String);
  if (["body", "query", "path", "header"].includes(names[0] ?? "")) names.shift();
  return names.length > 0 ? names.join(".") : undefined;
}
