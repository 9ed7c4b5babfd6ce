import type { Admission } from "../store/rate-buckets.js";

// One error class per API error code. Each knows its status, type and code; the server's
// single error handler renders them into the envelopes of docs/decisions.md §2.

export interface ErrorBody {
  error: { message: string; type: string; code: string; param?: string; provider?: string };
}

export abstract class GatewayError extends Error {
  abstract readonly status: number;
  abstract readonly type: string;
  abstract readonly code: string;
  readonly param: string | undefined;
  readonly provider: string | undefined;
  /** Extra response headers (Retry-After ...). */
  headers: Record<string, string> = {};

  constructor(message: string, options: { param?: string; provider?: string } = {}) {
    super(message);
    this.name = new.target.name;
    this.param = options.param;
    this.provider = options.provider;
  }

  toBody(): ErrorBody {
    const error: ErrorBody["error"] = { message: this.message, type: this.type, code: this.code };
    if (this.param !== undefined) error.param = this.param;
    if (this.provider !== undefined) error.provider = this.provider;
    return { error };
  }
}

/**
 * The base of an error class whose status, type and code never vary:
 * `class LinkExpiredError extends apiError(410, "invalid_request_error", "link_expired") {}`.
 */
export function apiError(status: number, type: string, code: string) {
  return class extends GatewayError {
    readonly status = status;
    readonly type = type;
    readonly code = code;
  };
}

export class InvalidApiKeyError extends apiError(401, "authentication_error", "invalid_api_key") {
  constructor(message = "Invalid API key. Send a valid gw key as `Authorization: Bearer <key>`.") {
    super(message);
  }
}

/** A key past its expiry: the same 401, saying so (only the holder of that key can see it). */
export class ExpiredApiKeyError extends InvalidApiKeyError {
  constructor(expiresAt: string) {
    super(`This API key expired at ${expiresAt}. Ask the gateway's operator for a new key.`);
  }
}

/** A model outside the key's own patterns (`gw keys create --models`): refused before any upstream call. */
export class KeyModelNotAllowedError extends apiError(403, "permission_error", "model_not_allowed") {
  constructor(model: string, patterns: readonly string[]) {
    super(`This API key may not use the model \`${model}\`; it may use: ${patterns.join(", ")}.`, { param: "model" });
  }
}

export class InvalidRequestError extends GatewayError {
  readonly status = 400;
  readonly type = "invalid_request_error";
  readonly code: string;
  constructor(message: string, options: { param?: string; provider?: string; code?: string } = {}) {
    super(message, options);
    this.code = options.code ?? "invalid_parameter";
  }
}

export class InvalidJsonError extends apiError(400, "invalid_request_error", "invalid_json") {}

export class UnsupportedMediaTypeError extends apiError(415, "invalid_request_error", "unsupported_media_type") {}

export class PayloadTooLargeError extends apiError(413, "invalid_request_error", "payload_too_large") {}

export class ModelNotFoundError extends apiError(404, "invalid_request_error", "model_not_found") {
  /** `message` words a case of its own (GET /v1/models/{id}: a model this key may not use). */
  constructor(model: string, message?: string) {
    super(
      message ??
        (model === "auto"
          ? "The model `auto` is not available: no auto route is configured."
          : `The model \`${model}\` does not exist or no route serves it. GET /v1/models lists the available models.`),
      { param: "model" },
    );
  }
}

export class ModelRequiresUpgradeError extends apiError(403, "permission_error", "model_requires_upgrade") {
  constructor(model: string, plan: string) {
    super(`The model \`${model}\` is not available on the ${plan} plan; upgrade to use it.`, { param: "model" });
  }
}

export class InsufficientCreditsError extends apiError(402, "insufficient_credits", "insufficient_credits") {
  /**
   * `why` replaces the generic "about N needed" when the gateway can say more (what would fit);
   * `limit` says which limit ran out (the plan's period or the key's budget).
   */
  constructor(remaining: number, needed: number, why?: string, limit = "this period on the agent's plan") {
    super(`Not enough credits for this request: ${remaining} left ${limit}; ${why ?? `about ${needed} needed`}.`);
  }
}

export class RateLimitExceededError extends apiError(429, "rate_limit_error", "rate_limit_exceeded") {
  constructor(
    limitPerMinute: number,
    retryAfterSeconds: number,
    /** The key's limits when it was refused, for the x-ratelimit-* headers. */
    readonly admission: Admission,
  ) {
    const unit = admission.refusedBy ?? "requests";
    super(`Rate limit of ${limitPerMinute} ${unit} per minute exceeded for this key; retry in ${retryAfterSeconds} s.`);
    this.headers = { "retry-after": String(retryAfterSeconds) };
  }
}

export class RouteNotFoundError extends apiError(404, "invalid_request_error", "not_found") {}

export class MethodNotAllowedError extends apiError(405, "invalid_request_error", "method_not_allowed") {}

/** Every upstream failed in a way that is not about a client-supplied value. */
export class UpstreamUnavailableError extends GatewayError {
  readonly status: number;
  readonly type = "upstream_error";
  readonly code: string;
  constructor(message: string, options: { status?: number; code?: string; provider?: string; failures?: string[] } = {}) {
    super(options.failures?.length ? `${message} Attempts: ${options.failures.join("; ")}.` : message, {
      provider: options.provider,
    });
    this.status = options.status ?? 502;
    this.code = options.code ?? "upstream_unavailable";
  }
}

/** A request refused by the HTTP layer before any route ran (a malformed URL ...). */
export class MalformedRequestError extends GatewayError {
  readonly status: number;
  readonly type = "invalid_request_error";
  readonly code = "invalid_request";
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export class InternalError extends apiError(500, "server_error", "internal_error") {}

/** An upstream error about a value the gateway accepted: returned verbatim with the upstream's status. */
export class UpstreamPassthroughError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly contentType: string,
    readonly provider: string,
    /** The vendor's own error body, when `body` is a conversion of it (Anthropic, Gemini). */
    readonly vendorBody?: string,
  ) {
    super(`upstream ${provider} answered ${status}`);
    this.name = "UpstreamPassthroughError";
  }
}

/** A request over the caller's plan cap (images per call, resolution): rejected, never clamped, nothing billed. */
export class PlanLimitExceededError extends apiError(403, "permission_error", "plan_limit_exceeded") {
  constructor(message: string, options: { param?: string } = {}) {
    super(message, options);
  }
}

/** No provider is configured for a tool (image generation ...): an operator matter. */
/** A video job that is not the caller's, or does not exist: the same answer for both. */
export class VideoJobNotFoundError extends apiError(404, "invalid_request_error", "video_job_not_found") {
  constructor(id: string) {
    super(`No video job ${id} for this key's agent.`, { param: "id" });
  }
}

/** A stored response (or an item of one) that is not the caller's agent's, or does not exist: the same answer for both. */
export class ResponseNotFoundError extends apiError(404, "invalid_request_error", "response_not_found") {
  constructor(what: string, param?: string) {
    super(`${what} not found.`, { param });
  }
}

/** A batch that is not the caller's agent's, or does not exist: the same answer for both. */
export class BatchNotFoundError extends apiError(404, "invalid_request_error", "batch_not_found") {
  constructor(id: string) {
    super(`No batch ${id} for this key's agent.`, { param: "batch_id" });
  }
}

/** A batch that has ended takes no cancel. */
export class BatchConflictError extends apiError(409, "invalid_request_error", "batch_ended") {}

/** A change a video job can no longer take (cancelling a finished one). */
export class VideoJobConflictError extends apiError(409, "invalid_request_error", "video_job_finished") {}

/** No search provider is set up and allowlisted: 503, type server_error (docs/decisions.md §2). */
export class SearchNotConfiguredError extends apiError(503, "server_error", "search_not_configured") {}

/** A path the API no longer serves; the message names its replacement. */
export class EndpointRemovedError extends apiError(410, "invalid_request_error", "endpoint_removed") {}

export class ProviderNotConfiguredError extends apiError(503, "service_unavailable", "provider_not_configured") {}

/** The file store (the blobs' backend: an S3 bucket ...) refused a call or did not answer. */
export class StorageUnavailableError extends apiError(503, "service_unavailable", "storage_unavailable") {}

/** The shared state store (Redis) did not answer or refused: nothing was served or billed; try again shortly. */
export class StateUnavailableError extends apiError(503, "service_unavailable", "state_unavailable") {
  constructor(message: string) {
    super(message);
    this.headers = { "retry-after": "1" };
  }
}

/** A local engine (ffprobe ...) is installed but too busy to answer: try again shortly, nothing is misconfigured. */
export class EngineBusyError extends apiError(503, "service_unavailable", "engine_busy") {
  constructor(message: string, options: { provider?: string } = {}) {
    super(message, options);
    this.headers = { "retry-after": "5" };
  }
}

/** A library picture that is missing, not a picture, or another agent's: one answer for all. */
export class AssetNotFoundError extends apiError(404, "invalid_request_error", "asset_not_found") {
  constructor(param: string) {
    super(`No picture with this id in your library ('${param}').`, { param });
  }
}

/** GET /metrics from a client other than loopback without the right `server.metricsToken`. */
export class MetricsTokenRequiredError extends apiError(401, "authentication_error", "invalid_metrics_token") {
  constructor() {
    super("Metrics from this address need `Authorization: Bearer <server.metricsToken>`.");
    this.headers = { "www-authenticate": "Bearer" };
  }
}

/** GET /metrics from a client other than loopback when no `server.metricsToken` is set. */
export class MetricsLoopbackOnlyError extends apiError(403, "permission_error", "metrics_loopback_only") {
  constructor() {
    super("Metrics are served on loopback only; set server.metricsToken to read them from elsewhere.");
  }
}

/** GET /ready when a readiness check fails; the message names the failing checks, nothing more. */
export class NotReadyError extends apiError(503, "service_unavailable", "not_ready") {
  constructor(readonly failing: string[]) {
    super(`Not ready: the ${failing.join(", ")} check${failing.length === 1 ? "" : "s"} failed.`);
  }
}

/** The admin API without a valid admin token (docs/decisions.md §25). */
export class AdminTokenRequiredError extends apiError(401, "authentication_error", "invalid_admin_token") {
  constructor(message = "The admin API needs `Authorization: Bearer <admin token>` (make one with `gw admin token create --name NAME`).") {
    super(message);
    this.headers = { "www-authenticate": "Bearer" };
  }
}

/** A read-only admin token asking for a change. */
export class AdminReadOnlyError extends apiError(403, "permission_error", "admin_read_only") {
  constructor(tokenName: string) {
    super(`The admin token "${tokenName}" is read-only; this call changes something.`);
  }
}

/** The admin API from an address outside loopback and admin.allowFrom. */
export class AdminAddressRefusedError extends apiError(403, "permission_error", "admin_address_refused") {
  constructor() {
    super("The admin API answers on loopback only; list this client's address in admin.allowFrom to reach it from elsewhere.");
  }
}

/** An admin change that conflicts with what is stored (a name taken, nothing to revoke). */
export class AdminConflictError extends apiError(409, "invalid_request_error", "conflict") {}

/** An admin resource that does not exist (an agent, a key, a token). */
export class AdminNotFoundError extends apiError(404, "invalid_request_error", "not_found") {}
