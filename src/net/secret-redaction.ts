// Removes the secrets gw itself sends upstream (a provider's key, its configured header values)
// from upstream text before it reaches a client or the log. An upstream that echoes the request's
// Authorization header in an error ("Invalid header value: Bearer sk-...") must not hand the
// provider's key to gw's caller.
export type Redact = (text: string) => string;

export const REDACTED = "[REDACTED]";

/** Shorter values are not secrets worth the risk of mangling ordinary text. */
const MIN_SECRET_LENGTH = 8;

export const redactNothing: Redact = (text) => text;

export function secretRedactor(secrets: Iterable<string | undefined>): Redact {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret || secret.length < MIN_SECRET_LENGTH) continue;
    // As sent, and as it reads once an upstream puts it in JSON (`/` escaped or not) or a URL.
    const json = JSON.stringify(secret).slice(1, -1);
    forms.add(secret);
    forms.add(json);
    forms.add(json.replaceAll("/", "\\/"));
    forms.add(encodeURIComponent(secret));
  }
  // Longest first, so a value that contains another is replaced whole.
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return redactNothing;
  return (text) => {
    for (const form of ordered) {
      if (text.includes(form)) text = text.replaceAll(form, REDACTED);
    }
    return text;
  };
}
