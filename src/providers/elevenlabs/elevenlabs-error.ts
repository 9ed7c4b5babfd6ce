// ElevenLabs error bodies (https://elevenlabs.io/docs/api-reference) -> the OpenAI error envelope the audio endpoints
// answer; the vendor's body is kept as `vendorBody`. Two shapes: FastAPI's validation list
// {detail: [{loc, msg, type}]} (422) and {detail: {status, message}} for the rest.
//
// The status is kept, 422 included: it is a client error to every rule that reads statuses (no
// retry, no fallback, passed back as it is), and it tells a caller the body failed validation
// upstream rather than in the gateway.

import { type UpstreamHttpError, withOpenAIEnvelope } from "../provider-errors.js";
import { readAs, readBodyAs, ValidationList, validationField } from "../upstream-schema.js";
import { ElevenLabsErrorBody } from "./elevenlabs-api.js";

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
  const detail = readBodyAs(ElevenLabsErrorBody, body)?.detail;
  if (typeof detail === "string") return { message: detail };
  if (Array.isArray(detail)) return fromValidationList(readAs(ValidationList, detail) ?? []);
  if (detail) return detail.status === undefined ? { message: detail.message } : { message: detail.message, code: detail.status };
  return undefined;
}

/** `body.text: field required; body.model_id: ...`, the first field as `param`, its type as `code`. */
function fromValidationList(items: ReadonlyArray<{ loc?: unknown; msg?: string; type?: string }>): ElevenLabsError | undefined {
  const problems = items.map((item) => ({ field: validationField(item.loc), message: item.msg ?? "is invalid", type: item.type }));
  const [first] = problems;
  if (!first) return undefined;
  const vendor: ElevenLabsError = { message: problems.map((problem) => (problem.field ? `${problem.field}: ${problem.message}` : problem.message)).join("; ") };
  if (first.field) vendor.param = first.field;
  if (first.type !== undefined) vendor.code = first.type;
  return vendor;
}
