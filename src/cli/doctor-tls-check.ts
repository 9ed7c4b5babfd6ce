// `gw doctor`'s look at the self-signed certificate `gw serve --https` keeps in the home: its
// fingerprint and expiry, and a key file other users can read.
import { X509Certificate } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import type { CheckStatus, DoctorCheck } from "./doctor-check-types.js";

const TLS_WARN_DAYS = 30;

/**
 * The self-signed certificate `gw serve --https` keeps (only once it was made). Never an error:
 * the server replaces an expired or unusable one at its next start, with a new fingerprint that
 * clients which pinned or trusted the old one must be given.
 */
export function tlsCheck(certFile: string, keyFile: string, now: Date): DoctorCheck {
  const check = (status: CheckStatus, detail: string): DoctorCheck => ({ name: "tls", status, path: certFile, detail });
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(readFileSync(certFile));
  } catch (error) {
    return check(
      "warn",
      `${certFile} is unusable (${error instanceof Error ? error.message : String(error)}); \`gw serve --https\` makes a new one, with a new fingerprint`,
    );
  }
  const expires = new Date(certificate.validTo);
  const fingerprint = `SHA-256 ${certificate.fingerprint256}`;
  if (expires <= now)
    return check(
      "warn",
      `self-signed certificate expired on ${expires.toISOString()}; \`gw serve --https\` makes a new one, with a new fingerprint (${fingerprint} now)`,
    );
  try {
    if (statSync(keyFile).mode & 0o077) return check("warn", `${keyFile} can be read by other users: chmod 600 it`);
  } catch {
    return check("warn", `${keyFile} is missing; \`gw serve --https\` makes a new certificate, with a new fingerprint`);
  }
  const days = Math.floor((expires.getTime() - now.getTime()) / 86_400_000);
  const detail = `self-signed certificate ${fingerprint}, expires on ${expires.toISOString()} (in ${days} days)`;
  return check(
    days < TLS_WARN_DAYS ? "warn" : "ok",
    days < TLS_WARN_DAYS ? `${detail}; the first start after that makes a new one, with a new fingerprint` : detail,
  );
}
