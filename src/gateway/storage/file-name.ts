// A user's filename is metadata only: it never becomes a path (blobs and records are keyed by
// generated ids). It is still tidied so that whoever uses it later (a download's
// Content-Disposition, an agent saving the file) gets a plain name: the last path segment, no
// control or bidirectional-override characters, NFC, at most 255 characters with the extension kept.
import contentDisposition from "content-disposition";
import { withoutFileNameControls } from "../../text/control-characters.js";

const MAX_CHARACTERS = 255;
const MAX_EXTENSION = 16;
export function normalizeFilename(raw: string | undefined): string {
  let name = withoutFileNameControls((raw ?? "").normalize("NFC"));
  name = name.split(/[\\/]/).pop() ?? "";
  name = name.trim();
  if (name === "" || name === "." || name === "..") return "file";
  return truncate(name);
}

function truncate(name: string): string {
  const characters = Array.from(name);
  if (characters.length <= MAX_CHARACTERS) return name;
  const dot = name.lastIndexOf(".");
  const extension = dot > 0 ? Array.from(name.slice(dot)) : [];
  if (extension.length > 1 && extension.length <= MAX_EXTENSION) {
    const stem = Array.from(name.slice(0, dot)).slice(0, MAX_CHARACTERS - extension.length);
    return `${stem.join("")}${extension.join("")}`;
  }
  return characters.slice(0, MAX_CHARACTERS).join("");
}

/**
 * `attachment` with the name twice (RFC 6266): `filename*` carries it exactly (RFC 5987, UTF-8,
 * percent-encoded), `filename` an ASCII stand-in for old clients (accents dropped, anything else
 * non-ASCII as "_"). The header is always one line of visible ASCII.
 */
export function attachmentDisposition(filename: string): string {
  const ascii = filename
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\x20-\x7e]/g, "_");
  return contentDisposition(filename, { type: "attachment", fallback: ascii });
}
