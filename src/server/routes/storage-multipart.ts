// Reads a multipart/form-data upload with busboy, streaming: the single `file` part is handed
// to `receive` as a stream while it arrives, so no file is ever held in memory; small text fields
// (OpenAI's `purpose`) go to the caller as they come. Limits on parts, fields, headers and sizes
// keep a hostile body from costing more than one file's worth of reading; every malformed or
// unexpected body becomes a 4xx, never a 500, and reading stops at the first refusal (the answer
// closes the connection: connection-policy.ts).
import type { IncomingMessage } from "node:http";
import type BusboyModule from "busboy";
import type { Busboy } from "busboy";
import { UnsupportedMediaTypeError } from "../../gateway/errors.js";
import { FileTooLargeError, StorageRequestError, UploadAbortedError } from "../../gateway/storage/storage-errors.js";
import type { IncomingFile } from "../../gateway/storage/upload-session.js";
import { onFirstUse } from "../../load/on-first-use.js";
import { TooManyPartsError } from "../server-errors.js";

/** Required at the first multipart body: a server that is never sent one never loads busboy. */
const loadBusboy = onFirstUse<typeof BusboyModule>("busboy");

/** Room for boundaries, part headers and the few small fields allowed beside the file. */
const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;
const FIELD_LIMITS = { fields: 16, fieldSize: 16 * 1024, fieldNameSize: 200, parts: 20 };
/**
 * What busboy may buffer, before it and in the file part, ahead of the receiver. With the default
 * (16 KiB) every 64 KiB socket chunk paused and resumed the request; 1 MiB each is a fixed bound
 * per upload, whatever the file's size (scripts/bench-transfer.mjs).
 */
const PARSER_BUFFER_BYTES = 1024 * 1024;

/**
 * `acceptField` is handed each text field as it arrives (before or after the file); what it throws
 * refuses the upload. Without it, text fields are read and left alone.
 */
export async function readMultipartFile(
  request: IncomingMessage,
  maxFileBytes: number,
  receive: (file: IncomingFile) => Promise<void>,
  acceptField?: (name: string, value: string) => void,
): Promise<void> {
  const contentType = request.headers["content-type"] ?? "";
  if (!/^multipart\/form-data\s*(?:;|$)/i.test(contentType)) {
    throw new UnsupportedMediaTypeError("Content-Type must be multipart/form-data, with the file in a part named `file`.");
  }
  const maxBodyBytes = maxFileBytes + MULTIPART_OVERHEAD_BYTES;
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBodyBytes) throw new FileTooLargeError(maxFileBytes, { closeConnection: true });

  let parser: Busboy;
  try {
    parser = loadBusboy()({
      headers: request.headers,
      // Filenames from browsers and curl are UTF-8 (busboy's default is latin1).
      defParamCharset: "utf8",
      highWaterMark: PARSER_BUFFER_BYTES,
      fileHwm: PARSER_BUFFER_BYTES,
      // One byte past the limit tells a file of exactly maxFileBytes from a larger one.
      limits: { ...FIELD_LIMITS, files: 1, fileSize: maxFileBytes + 1 },
    });
  } catch (error) {
    throw new StorageRequestError(`The multipart body cannot be read: ${(error as Error).message}.`, "invalid_multipart");
  }
  return new Promise<void>((resolve, reject) => {
    let problem: Error | null = null;
    let receiving: Promise<void> | null = null;
    let sawFile = false;
    let bodyBytes = 0;
    let finished = false;
    const finish = (error?: Error) => {
      if (finished) return;
      finished = true;
      request.off("data", countBytes);
      if (error) problem ??= error;
      void (receiving ?? Promise.resolve()).then(() => {
        if (problem) reject(problem);
        else if (!sawFile)
          reject(new StorageRequestError("The upload has no `file` part: send the file as multipart/form-data field `file`.", "file_required"));
        else resolve();
      });
    };
    const stopReading = (error: Error) => {
      if (finished) return;
      request.unpipe(parser);
      request.pause();
      // busboy may be inside its own write (a limit is reported mid-chunk): destroying it there
      // would crash it; once that write returns, its open file part fails and the receiver stops.
      process.nextTick(() => parser.destroy(error));
      finish(error);
    };
    const countBytes = (chunk: Buffer) => {
      bodyBytes += chunk.length;
      // Parts that are skipped (a second file ...) are not capped by busboy: cap the whole body.
      if (bodyBytes > maxBodyBytes) stopReading(new FileTooLargeError(maxFileBytes, { closeConnection: true }));
    };

    parser.on("file", (name, stream, info) => {
      // busboy fails a file part that never ends (a cut-off body) on the part's stream as well as
      // on the parser; the parser's 'error' reports it, the receiver sees it through its pipe.
      stream.on("error", () => undefined);
      // Parts busboy still finds in the chunk it is parsing after a refusal.
      if (finished) return stream.resume();
      if (name !== "file") {
        stream.resume();
        return stopReading(new StorageRequestError(`Unexpected file part \`${name}\`: send the file in a part named \`file\`.`, "unexpected_part"));
      }
      sawFile = true;
      receiving = receive({ filename: htmlFormFilename(info.filename), contentType: info.mimeType, body: stream }).then(
        () => undefined,
        (error: Error) => {
          // Also when the body has been read already: the upload fails with the receiver's error.
          problem ??= error;
          stream.resume();
          stopReading(error);
        },
      );
    });
    parser.on("field", (name, value) => {
      if (finished) return;
      if (name === "file")
        return stopReading(new StorageRequestError("The `file` part must be a file (a part with a filename), not a text field.", "file_required"));
      try {
        acceptField?.(name, value);
      } catch (error) {
        stopReading(error instanceof Error ? error : new Error(String(error)));
      }
    });
    parser.on("filesLimit", () => stopReading(new StorageRequestError("Send exactly one file part, named `file`.", "duplicate_file")));
    parser.on("partsLimit", () => stopReading(new TooManyPartsError(`The form has too many parts (at most ${FIELD_LIMITS.parts}).`)));
    parser.on("fieldsLimit", () => stopReading(new TooManyPartsError(`The form has too many fields (at most ${FIELD_LIMITS.fields}).`)));
    parser.on("error", (error: Error) => {
      request.unpipe(parser);
      request.pause();
      finish(new StorageRequestError(`The multipart body is malformed: ${error.message}.`, "invalid_multipart"));
    });
    parser.on("close", () => finish());
    request.on("data", countBytes);
    request.once("error", () => stopReading(new UploadAbortedError()));
    request.once("close", () => {
      if (!request.complete) stopReading(new UploadAbortedError());
    });
    request.pipe(parser);
  });
}

/**
 * Browsers and fetch (the HTML standard's multipart encoding) send `"`, CR and LF in a filename as
 * %22, %0D and %0A; nothing else is escaped, so only those are turned back. (`filename*`, when
 * sent, is already decoded by busboy and has no such escapes.)
 */
function htmlFormFilename(filename: string | undefined): string | undefined {
  return filename?.replace(/%22/gi, '"').replace(/%0D/gi, "\r").replace(/%0A/gi, "\n");
}
