// A multipart/form-data body streamed from a file: text fields, then the file part last, framed
// around the file's bytes as they are read, with the length known up front (Content-Length).
//
// Not FormData with a Blob, though Node has both: uploads may be 50 MB or more and come from a
// stream (stdin, a progress-counting file reader), which a Blob would first hold in memory; and
// FormData writes only `filename="..."`, where this part also carries an RFC 5987 `filename*`
// that keeps a non-ASCII name exactly (form-filename.ts).
import { formFilename, rfc5987 } from "./form-filename.js";
import type { UploadSource } from "./storage-types.js";

export interface MultipartUpload {
  /** `multipart/form-data; boundary=...` */
  contentType: string;
  contentLength: number;
  body: AsyncIterable<Uint8Array>;
}

/** `file` as the part named `file`, after `fields` (name, value) in order. */
export function multipartUpload(file: UploadSource, fields: ReadonlyArray<readonly [string, string]> = []): MultipartUpload {
  const boundary = `gw-${crypto.randomUUID()}`;
  const encoder = new TextEncoder();
  const fieldParts = fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join("");
  const head = encoder.encode(
    `${fieldParts}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${formFilename(file.filename)}"; filename*=UTF-8''${rfc5987(file.filename)}\r\n` +
      `Content-Type: ${file.contentType}\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: head.length + file.sizeBytes + tail.length,
    body: framed(head, file.open(), tail),
  };
}

async function* framed(head: Uint8Array, body: AsyncIterable<Uint8Array>, tail: Uint8Array): AsyncGenerator<Uint8Array> {
  yield head;
  yield* body;
  yield tail;
}
