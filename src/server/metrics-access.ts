// Who may read GET /metrics: a client on loopback without a key; others only with
// `Authorization: Bearer <server.metricsToken>`, and none of them when no token is set. Only the
// socket's address counts, never X-Forwarded-For or the like: a header is whatever the client
// wrote, and behind a reverse proxy on the same host every client would read as loopback (such a
// proxy must not pass /metrics on, or the operator sets a token and the proxy sends it;
// docs/decisions.md §12).
import { createHash, timingSafeEqual } from "node:crypto";
import ipaddr from "ipaddr.js";
import { bearerToken } from "../gateway/auth/key-authenticator.js";

/** allowed; token_required: 401 (no token or the wrong one); loopback_only: 403 (no token is set). */
export type MetricsAccess = "allowed" | "token_required" | "loopback_only";

/** 127.0.0.0/8, ::1, and IPv4 loopback written as IPv6 (::ffff:127.0.0.1), as a socket reports them. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address || !ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === "loopback";
}

export function metricsAccess(loopback: boolean, configuredToken: string | undefined, authorization: string | null): MetricsAccess {
  if (loopback) return "allowed";
  if (!configuredToken) return "loopback_only";
  const presented = bearerToken(authorization);
  return presented !== null && sameToken(presented, configuredToken) ? "allowed" : "token_required";
}

/** Compared as SHA-256 digests: equal lengths for timingSafeEqual, and the time says nothing of the token. */
function sameToken(presented: string, expected: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}
