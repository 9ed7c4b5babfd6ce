// Read a small multipart/form-data request (the image edits form: a prompt, a few scalar fields
// and up to a few pictures) into memory with busboy. Pictures are bounded by a per-file limit and
// a file count, the rest by busboy's field limits; anything past a limit or malformed is a 4xx in
// the gateway envelope, never a 500.
import type { IncomingMessage } from "node:http";
import type BusboyModule from "busboy";
import type { Busboy } from "busboy";
import { InvalidRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from "../gateway/errors.js";
import { onFirstUse } from "../load/on-first-use.js";
import { TooManyPartsError } from "./server-errors.js";

/** Required at the first multipart body: a server that is never sent one never loads busboy. */
const loadBusboy = onFirstUse<typeof BusboyModule>("busboy");

export interface FormFile {
  field: string;
  filename: string | undefined;
  contentType: string;
  bytes: Buffer;
}

export interface MultipartForm {
  /** Text fields in order; a repeated name appears once per value. */
  fields: Array<[string, string]>;
  files: FormFile[];
}

export interface MultipartLimits {
  maxFileBytes: number;
  maxFiles: number;
}

const FIELD_LIMITS = { fields: 40, fieldSize: 64 * 1024, fieldNameSize: 200, parts: 60 };

export function isMultipart(contentType: string | null | undefined): boolean {
  return /^multipart\/form-data\s*(?:;|$)/i.test(contentType ?? "");
}

export function readMultipartForm(request: IncomingMessage, limits: MultipartLimits): Promise<MultipartForm> {
  if (!isMultipart(request.headers["content-type"])) throw new UnsupportedMediaTypeError("Content-Type must be multipart/form-data.");
  const maxBodyBytes = limits.maxFiles * limits.maxFileBytes + FIELD_LIMITS.fields * FIELD_LIMITS.fieldSize;
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBodyBytes) throw formTooLarge(limits, maxBodyBytes);
  let parser: Busboy;
  try {
    parser = loadBusboy()({
      headers: request.headers,
      defParamCharset: "utf8",
      limits: { ...FIELD_LIMITS, files: limits.maxFiles, fileSize: limits.maxFileBytes + 1 },
    });
  } catch (error) {
    throw new InvalidRequestError(`The multipart body cannot be read: ${(error as Error).message}.`, { code: "invalid_multipart" });
  }
  return new Promise((resolve, reject) => {
    const form: MultipartForm = { fields: [], files: [] };
    let settled = false;
    let received = 0;
    const settle = (problem?: Error) => {
      if (settled) return;
      settled = true;
      request.off("data", countBytes);
      if (!problem) return resolve(form);
      // Read no further: the refusal closes the connection (connection-policy.ts). busboy may be
      // inside its own write (a limit is reported mid-chunk): it is destroyed once that returns.
      request.unpipe(parser);
      request.pause();
      process.nextTick(() => parser.destroy());
      reject(problem);
    };
    // busboy does not cap the whole body (a preamble, or a body without its boundary, is read for ever).
    const countBytes = (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBodyBytes) settle(formTooLarge(limits, maxBodyBytes));
    };
    parser.on("file", (field, stream, info) => {
      stream.on("error", () => undefined);
      // Parts busboy still finds in the chunk it is parsing after a refusal.
      if (settled) return stream.resume();
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= limits.maxFileBytes) chunks.push(chunk);
      });
      stream.on("limit", () => settle(tooLarge(limits.maxFileBytes)));
      stream.on("end", () => {
        if (size <= limits.maxFileBytes) form.files.push({ field, filename: info.filename, contentType: info.mimeType, bytes: Buffer.concat(chunks) });
      });
    });
    parser.on("field", (name, value, info) => {
      if (info.valueTruncated) settle(new InvalidRequestError(`The form field '${name}' is longer than ${FIELD_LIMITS.fieldSize} bytes.`, { param: name }));
      else form.fields.push([name, value]);
    });
    // How many files an endpoint takes is its own rule (400); parts and fields past these bounds make the form too large (413).
    parser.on("filesLimit", () => settle(new InvalidRequestError(`The form has more than ${limits.maxFiles} files.`, { code: "too_many_files" })));
    parser.on("partsLimit", () => settle(new TooManyPartsError(`The form has too many parts (at most ${FIELD_LIMITS.parts}).`)));
    parser.on("fieldsLimit", () => settle(new TooManyPartsError(`The form has too many fields (at most ${FIELD_LIMITS.fields}).`)));
    parser.on("error", (error: Error) => settle(new InvalidRequestError(`The multipart body is malformed: ${error.message}.`, { code: "invalid_multipart" })));
    parser.on("close", () => settle());
    request.once("aborted", () => settle(new InvalidRequestError("The request body ended early.", { code: "invalid_multipart" })));
    request.on("data", countBytes);
    request.pipe(parser);
  });
}

function tooLarge(maxFileBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`A file in the form is larger than the ${maxFileBytes}-byte limit.`);
}

function formTooLarge(limits: MultipartLimits, maxBodyBytes: number): PayloadTooLargeError {
  const files = limits.maxFiles === 1 ? "one file" : `${limits.maxFiles} files`;
  return new PayloadTooLargeError(`The form is larger than ${maxBodyBytes} bytes, the most ${files} of ${limits.maxFileBytes} bytes and its fields can take.`);
}
