// Deepgram error bodies (https://developers.deepgram.com/reference/errors: the older {err_code, err_msg, request_id} and the
// newer {category, message, details, request_id}) -> the OpenAI error envelope the audio endpoints
// answer, the status kept; the vendor's body is kept as `vendorBody`.

import { type UpstreamHttpError, withOpenAIEnvelope } from "../provider-errors.js";
import { readBodyAs } from "../upstream-schema.js";
import { DeepgramErrorBody } from "./deepgram-api.js";

interface DeepgramError {
  code?: string;
  message: string;
}

export function fromDeepgramHttpError(error: UpstreamHttpError): UpstreamHttpError {
  const vendor = readDeepgramError(error.body);
  return withOpenAIEnvelope(error, {
    message: vendor?.message ?? `Deepgram answered HTTP ${error.status}.`,
    // A Deepgram account out of balance is OpenAI's insufficient_quota.
    type: error.status === 402 ? "insufficient_quota" : undefined,
    code: vendor?.code ?? `http_${error.status}`,
  });
}

export function readDeepgramError(body: string): DeepgramError | undefined {
  const parsed = readBodyAs(DeepgramErrorBody, body);
  if (!parsed) return undefined;
  const code = parsed.err_code ?? parsed.category;
  const message = parsed.err_msg ?? parsed.message;
  const { details } = parsed;
  // The newer shape puts the specifics in `details` ("message": "Invalid JSON", "details": "expected ...").
  const full = message && details && !message.includes(details) ? `${message}${/[.!?]$/.test(message) ? " " : ": "}${details}` : (message ?? details);
  if (full === undefined) return undefined;
  return code === undefined ? { message: full } : { code, message: full };
}
