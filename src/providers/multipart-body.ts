// A multipart/form-data body built in memory (image uploads are a few MB at most and already in
// memory), sent through the one upstream client as bytes with its boundary in the content type.
// Not undici's FormData: its bytes only come out asynchronously through a Response, with a
// boundary it picks, while this one is synchronous and its boundary can be fixed.
import { randomBytes } from "node:crypto";

export type MultipartPart = { name: string; value: string } | { name: string; filename: string; contentType: string; bytes: Uint8Array };

export interface MultipartBody {
  body: Buffer;
  /** `multipart/form-data; boundary=...`, for the request's content-type header. */
  contentType: string;
}

export function encodeMultipart(parts: readonly MultipartPart[], boundary = `gw-${randomBytes(16).toString("hex")}`): MultipartBody {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(part.name)}"`;
    if ("bytes" in part) {
      head += `; filename="${quoted(part.filename)}"\r\nContent-Type: ${part.contentType}`;
    }
    chunks.push(Buffer.from(`${head}\r\n\r\n`, "utf8"));
    chunks.push("bytes" in part ? Buffer.from(part.bytes.buffer, part.bytes.byteOffset, part.bytes.byteLength) : Buffer.from(part.value, "utf8"));
    chunks.push(Buffer.from("\r\n", "utf8"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`, "utf8"));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Field names and file names as HTML's form encoding escapes them in a quoted string. */
function quoted(value: string): string {
  return value.replaceAll("\r", "%0D").replaceAll("\n", "%0A").replaceAll('"', "%22");
}
