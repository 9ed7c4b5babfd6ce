// The two ways a user-supplied URL fetch fails. Messages are shown to the caller as they are, so
// they say what was refused and why and never name an internal address, port or system error.
import type { AddressClass } from "./ip-policy.js";

export type UrlRefusal = "invalid_url" | "scheme" | "userinfo" | AddressClass;

/** The URL, or a redirect it leads to, may not be fetched at all (400 url_not_allowed). */
export class UrlNotAllowedError extends Error {
  readonly reason: UrlRefusal;
  constructor(reason: UrlRefusal, message: string) {
    super(message);
    this.name = "UrlNotAllowedError";
    this.reason = reason;
  }
}

export type FetchFailure = "dns" | "network" | "timeout" | "too_large" | "http_status" | "too_many_redirects";

/** The URL was allowed but fetching it did not produce a usable body. */
export class FetchFailedError extends Error {
  readonly reason: FetchFailure;
  /** The upstream HTTP status, for reason "http_status". */
  readonly status: number | undefined;
  constructor(reason: FetchFailure, message: string, status?: number) {
    super(message);
    this.name = "FetchFailedError";
    this.reason = reason;
    this.status = status;
  }
}
