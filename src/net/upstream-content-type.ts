// The Content-Type of an upstream's error answer, which gw passes on beside the error's body. It is
// upstream text like the body: an upstream that echoes the request's Authorization header into its
// headers must not hand the provider's key to gw's caller. So it is kept only when it is a plain
// media type (type/subtype and optional parameters, printable ASCII, bounded), with the secrets gw
// sent redacted as in the body; anything else becomes application/json.
import type { Redact } from "./secret-redaction.js";

export const FALLBACK_CONTENT_TYPE = "application/json";

/** Longer than any media type a vendor sends; a bound on what reaches a client's header. */
const MAX_LENGTH = 256;
// RFC 9110 §8.3.1: token "/" token *( OWS ";" OWS token "=" ( token / quoted-string ) ), without obs-text.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED_STRING = '"(?:[\\t !#-\\[\\]-~]|\\\\[\\t -~])*"';
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED_STRING}))*$`);

/** The upstream's Content-Type, redacted, when it is a plain media type; else application/json. */
export function passthroughContentType(value: string | undefined, redact: Redact): string {
  if (value === undefined) return FALLBACK_CONTENT_TYPE;
  const redacted = redact(value.trim());
  return redacted.length <= MAX_LENGTH && MEDIA_TYPE.test(redacted) ? redacted : FALLBACK_CONTENT_TYPE;
}
