// Turn the text forms a client may send a picture in (a data: URL or bare base64) into bytes,
// strictly: a string that is not valid base64 is refused instead of being decoded leniently into
// garbage, and the decoded size is checked before any decoding happens.
import { InvalidImageError } from "./image-error.js";

const STANDARD_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const URL_SAFE_BASE64 = /^[A-Za-z0-9_-]*={0,2}$/;

/** Bytes of a `data:[type][;params][;base64],payload` URL. The declared type is ignored. */
export function bytesFromDataUrl(url: string, maxBytes: number): Buffer {
  const comma = url.indexOf(",");
  if (comma === -1) throw new InvalidImageError("invalid_source", "the data: URL has no comma before its data");
  const parameters = url
    .slice("data:".length, comma)
    .split(";")
    .map((part) => part.trim().toLowerCase());
  const payload = url.slice(comma + 1);
  if (parameters.at(-1) === "base64") {
    return bytesFromBase64(payload.includes("%") ? percentDecode(payload).toString("latin1") : payload, maxBytes, "data: URL");
  }
  const bytes = percentDecode(payload);
  if (bytes.length > maxBytes) throw tooLarge(maxBytes);
  return bytes;
}

/** Bytes of base64 text (standard or URL-safe alphabet, padding optional, whitespace ignored). */
export function bytesFromBase64(text: string, maxBytes: number, what = "image data"): Buffer {
  const plain = canonicalBase64(text, maxBytes);
  if (plain) return plain;
  const compact = text.replace(/\s+/g, "");
  if (compact.length === 0) throw new InvalidImageError("invalid_source", `the ${what} is empty`);
  const unwrapped = compact !== text ? canonicalBase64(compact, maxBytes) : null;
  if (unwrapped) return unwrapped;
  if (compact.length % 4 === 1 || !(STANDARD_BASE64.test(compact) || URL_SAFE_BASE64.test(compact))) {
    throw new InvalidImageError("invalid_source", `the ${what} is not valid base64`);
  }
  const decodedLength = Math.floor((compact.length * 3) / 4) - trailingPadding(compact);
  if (decodedLength > maxBytes) throw tooLarge(maxBytes);
  return Buffer.from(compact, "base64");
}

/**
 * The bytes of `text` when it is base64 exactly as an encoder writes it (one alphabet, no
 * whitespace, padding kept or left out) and within `maxBytes`; null otherwise, and the checks
 * above decide. Those checks answer the same for such text, but their regular expressions cost
 * ~10 ns a character on the event loop (~100 ms for a 12 MP photo): here it is decoded and
 * encoded again natively, and compared.
 */
function canonicalBase64(text: string, maxBytes: number): Buffer | null {
  const padding = trailingPadding(text);
  if (text.length === 0 || text.length % 4 === 1 || (text.length - padding) % 4 === 1 || text.charCodeAt(text.length - 1 - padding) === 61) return null;
  if (Math.floor((text.length * 3) / 4) - padding > maxBytes) return null;
  const bytes = Buffer.from(text, "base64");
  const urlSafe = text.includes("-") || text.includes("_");
  const again = bytes.toString(urlSafe ? "base64url" : "base64");
  const unpadded = again.length - trailingPadding(again);
  // Equal to a fresh encoding: only the alphabet's characters, in one alphabet, padding at the end only.
  return unpadded === text.length - padding && text.startsWith(again.slice(0, unpadded)) ? bytes : null;
}

function trailingPadding(text: string): number {
  return text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
}

export function tooLarge(maxBytes: number): InvalidImageError {
  return new InvalidImageError("too_large", `the image is larger than the ${maxBytes}-byte limit`);
}

/** RFC 3986 percent-decoding to raw bytes (decodeURIComponent would insist on UTF-8). */
function percentDecode(text: string): Buffer {
  const input = Buffer.from(text, "utf8");
  const output = Buffer.allocUnsafe(input.length);
  let length = 0;
  for (let index = 0; index < input.length; index += 1) {
    const high = hexValue(input[index + 1]);
    const low = hexValue(input[index + 2]);
    if (input[index] === 0x25 && high !== -1 && low !== -1) {
      output[length++] = high * 16 + low;
      index += 2;
    } else {
      output[length++] = input[index]!;
    }
  }
  return output.subarray(0, length);
}

function hexValue(byte: number | undefined): number {
  if (byte === undefined) return -1;
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}
