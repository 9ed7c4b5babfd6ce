// A file name in a multipart part's Content-Disposition: the plain `filename=` (the HTML
// standard's escaping, what browsers and fetch send, with the control characters no header may
// carry replaced) beside an RFC 5987 `filename*` that keeps the name exactly.
import { replaceControlCharacters } from "../text/control-characters.js";

export function formFilename(name: string): string {
  return replaceControlCharacters(name.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A"), "_");
}

/** RFC 5987 ext-value characters: the rest percent-encoded as UTF-8. */
export function rfc5987(name: string): string {
  return encodeURIComponent(name).replace(/['()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
}
