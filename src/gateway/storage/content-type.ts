// Content types of stored files. They are sent back as the download's Content-Type, so only a
// well-formed `type/subtype[; name=value ...]` is accepted (no CR/LF, no stray characters).
const TOKEN = "[A-Za-z0-9!#$&^_.+-]+";
const PARAMETER = `\\s*;\\s*${TOKEN}=(?:${TOKEN}|"[^"\\\\\\r\\n\\u0000-\\u001f]*")`;
const CONTENT_TYPE = new RegExp(`^(${TOKEN})/(${TOKEN})((?:${PARAMETER})*)\\s*$`);
const MAX_LENGTH = 200;

/** The content type with type and subtype lower-cased, or null when it is not a valid one. */
export function normalizeContentType(raw: string): string | null {
  const value = raw.trim();
  if (value.length === 0 || value.length > MAX_LENGTH) return null;
  const match = CONTENT_TYPE.exec(value);
  if (!match) return null;
  return `${match[1]!.toLowerCase()}/${match[2]!.toLowerCase()}${match[3] ?? ""}`;
}

/** Whether a request's Content-Type is the one a link was signed for (type and subtype case-insensitive). */
export function sameContentType(presented: string | null, signed: string): boolean {
  return presented !== null && normalizeContentType(presented) === signed;
}
