// Vendor-neutral failures a provider reports. The gateway decides from them whether to retry,
// fall back to the next route, or pass the upstream's answer through verbatim.

// The upstream client's failures are the providers' too: they are defined beside the client
// (src/net) so that it never imports a provider module, and re-exported here so that providers,
// the gateway and the tests name every upstream failure from this one module.
import { UpstreamHttpError } from "../net/upstream-errors.js";

export {
  isRetryableStatus,
  isTimeoutFailure,
  type NetworkFailure,
  UpstreamHttpError,
  UpstreamNetworkError,
} from "../net/upstream-errors.js";

/**
 * The request holds something this vendor cannot take (n > 1 for Anthropic, a picture URL that may
 * not be fetched ...). Found before any upstream call; the caller's fault, so a 400.
 */
export class UnsupportedContentError extends Error {
  constructor(
    message: string,
    /** The request parameter at fault, as a JSON path (`messages[2].content[1]`), when known. */
    readonly param?: string,
    /** The API error code, when more precise than invalid_parameter (`url_not_allowed`, `invalid_image` ...). */
    readonly code?: string,
  ) {
    super(message);
    this.name = "UnsupportedContentError";
  }
}

/** OpenAI's error `type` for an HTTP status: what vendor errors are translated into. */
export function openaiErrorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  return status >= 500 ? "server_error" : "invalid_request_error";
}

/** What a vendor's error says, in OpenAI's terms: the fields of `{"error":{...}}`. */
export interface OpenAIErrorEnvelope {
  message: string;
  /** Defaults to `openaiErrorType` of the status. */
  type?: string;
  param?: string | null;
  code: string;
}

export interface EnvelopeOptions {
  /** The status to answer instead of the upstream's (a vendor that says 400 for a bad key). */
  status?: number;
  /** The wait assumed when the upstream gave none (a vendor's own retry hint in its body). */
  retryAfterMs?: number;
  /** The wait assumed for a 429 when the upstream gave none (a vendor known to rate-limit so). */
  rateLimitPauseMs?: number;
}

/**
 * A vendor's error as the OpenAI error envelope (`application/json`), kept on a new
 * UpstreamHttpError: the status kept (unless `options.status`), the vendor's body kept as
 * `vendorBody`, the upstream's Retry-After kept or else the options' defaults.
 */
export function withOpenAIEnvelope(error: UpstreamHttpError, envelope: OpenAIErrorEnvelope, options: EnvelopeOptions = {}): UpstreamHttpError {
  const status = options.status ?? error.status;
  const body = JSON.stringify({
    error: { message: envelope.message, type: envelope.type ?? openaiErrorType(status), param: envelope.param ?? null, code: envelope.code },
  });
  const retryAfterMs = error.retryAfterMs ?? options.retryAfterMs ?? (status === 429 ? options.rateLimitPauseMs : undefined);
  return new UpstreamHttpError({
    provider: error.provider,
    status,
    body,
    contentType: "application/json",
    retryAfterMs,
    vendorBody: error.body,
    request: error.request,
  });
}
