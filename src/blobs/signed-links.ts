// The gateway's own signed links (not S3 SigV4; docs/decisions.md §5):
//
//   <public url><path>?expires=<unix s>&size=<bytes>&type=<content type>&signature=<base64url>
//   signature = HMAC-SHA256(secret, "gw-link-v1\n" METHOD "\n" path "\n" expires "\n" type "\n" size)
//
// The link carries what it was signed over, so it is verified before anything is looked up
// (a prober without a valid signature learns nothing, not even whether an id exists). The
// host is not signed: links are built from the configured public URL and a proxy in front of
// the gateway may present another Host.
import { createHmac, timingSafeEqual } from "node:crypto";

export type LinkMethod = "GET" | "PUT";

export interface LinkClaims {
  method: LinkMethod;
  /** The path the gateway serves the link on, e.g. /v1/storage/blobs/file_01H... */
  path: string;
  /** Unix seconds after which the link is refused. */
  expires: number;
  contentType: string;
  sizeBytes: number;
}

export type LinkCheck = { ok: true; claims: LinkClaims } | { ok: false; reason: "malformed" | "signature" | "method" | "expired"; claims?: LinkClaims };

const SIGNATURE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** The query parameters a link is made of, each exactly once. */
const LINK_PARAMETERS = ["expires", "size", "type", "signature"] as const;
const INTEGER_PATTERN = /^(0|[1-9][0-9]{0,15})$/;

export function signLink(secret: Uint8Array, claims: LinkClaims): string {
  return createHmac("sha256", secret).update(canonical(claims)).digest("base64url");
}

/** The full link: `baseUrl` (public URL or listening address, no trailing slash) + path + query. */
export function buildSignedUrl(baseUrl: string, secret: Uint8Array, claims: LinkClaims): string {
  const query = new URLSearchParams({
    expires: String(claims.expires),
    size: String(claims.sizeBytes),
    type: claims.contentType,
    signature: signLink(secret, claims),
  });
  return `${baseUrl.replace(/\/+$/, "")}${claims.path}?${query.toString()}`;
}

/**
 * Check a presented link: well-formed, signed by `secret` for this method and path, not expired.
 * The signature is checked before the expiry, so an altered expiry reads as "signature". A
 * parameter given twice (a second `expires` appended to a genuine link) is malformed: which copy
 * a reader takes is not the link's to decide, so the link is refused like an altered one.
 */
export function verifyLink(secret: Uint8Array, request: { method: string; path: string; query: URLSearchParams }, nowSeconds: number): LinkCheck {
  for (const name of LINK_PARAMETERS) if (request.query.getAll(name).length > 1) return { ok: false, reason: "malformed" };
  const expires = request.query.get("expires");
  const size = request.query.get("size");
  const contentType = request.query.get("type");
  const signature = request.query.get("signature");
  if (!expires || !size || contentType === null || !signature) return { ok: false, reason: "malformed" };
  if (!INTEGER_PATTERN.test(expires) || !INTEGER_PATTERN.test(size) || !SIGNATURE_PATTERN.test(signature)) return { ok: false, reason: "malformed" };
  const presented = Buffer.from(signature, "ascii");
  const method = request.method.toUpperCase();
  const base = { path: request.path, expires: Number(expires), contentType, sizeBytes: Number(size) };
  if (method === "GET" || method === "PUT") {
    const claims: LinkClaims = { ...base, method };
    if (matches(secret, claims, presented)) {
      return claims.expires < nowSeconds ? { ok: false, reason: "expired", claims } : { ok: true, claims };
    }
  }
  // Say so when the link is genuine but for another method (a PUT link used to download ...).
  for (const other of ["GET", "PUT"] as const) {
    if (other !== method && matches(secret, { ...base, method: other }, presented)) return { ok: false, reason: "method", claims: { ...base, method: other } };
  }
  return { ok: false, reason: "signature" };
}

/** Compares the base64url text, not decoded bytes: exactly one spelling of a signature is valid. */
function matches(secret: Uint8Array, claims: LinkClaims, presented: Buffer): boolean {
  const expected = Buffer.from(signLink(secret, claims), "ascii");
  return expected.length === presented.length && timingSafeEqual(expected, presented);
}

function canonical(claims: LinkClaims): string {
  return ["gw-link-v1", claims.method, claims.path, String(claims.expires), claims.contentType, String(claims.sizeBytes)].join("\n");
}
