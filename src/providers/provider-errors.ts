// Vendor-neutral failures a provider reports. The gateway decides from them whether to retry,
// fall back to the next route, or pass the upstream's answer through verbatim.

/** The upstream answered with a non-2xx status. `body` is its raw text. */
export class UpstreamHttpError extends Error {
  constructor(
    readonly provider: string,
    readonly status: number,
    readonly body: string,
    readonly contentType: string,
    /** Milliseconds the upstream asked us to wait (Retry-After / retry-after-ms), if any. */
    readonly retryAfterMs: number | undefined,
  ) {
    super(`${provider} answered HTTP ${status}`);
    this.name = "UpstreamHttpError";
  }
}

export type NetworkFailure = "connect" | "first_byte_timeout" | "idle_timeout" | "connection_lost" | "invalid_response";

/** The upstream could not be reached, was too slow, or broke the connection. */
export class UpstreamNetworkError extends Error {
  constructor(
    readonly provider: string,
    readonly failure: NetworkFailure,
    detail: string,
  ) {
    super(`${provider}: ${failure.replaceAll("_", " ")} (${detail})`);
    this.name = "UpstreamNetworkError";
  }
}
