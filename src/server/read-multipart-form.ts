// Read a small multipart/form-data request (the image edits form: a prompt, a few scalar fields
// and up to a few pictures) into memory with busboy. Pictures are bounded by a per-file limit and
// a file count, the rest by busboy's field limits; anything past a limit or malformed is a 4xx in
// the gateway envelope, never a 500.
import type { IncomingMessage } from "node:http";
import busboy, { type Busboy } from "busboy";
import { InvalidRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from "../gateway/errors.js";

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
  if (Number.isFinite(declared) && declared > maxBodyBytes) throw tooLarge(limits.maxFileBytes);
  let parser: Busboy;
  try {
    parser = busboy({
      headers: request.headers,
      defParamCharset: "utf8",
      limits: { ...FIELD_LIMITS, files: limits.maxFiles, fileSize: limits.maxFileBytes + 1 },
    });
  } catch (error) {
    throw new InvalidRequestError(`The multipart body cannot be read: ${(error as Error).message}.`, { code: "invalid_multipart" });
  }
  return new Promise((resolve, reject) => {
    const form: MultipartForm = { fields: [], files: [] };
    let problem: Error | undefined;
    let settled = false;
    const fail = (error: Error) => {
      problem ??= error;
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      if (problem) reject(problem);
      else resolve(form);
    };
    parser.on("file", (field, stream, info) => {
      stream.on("error", () => undefined);
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= limits.maxFileBytes) chunks.push(chunk);
      });
      stream.on("limit", () => fail(tooLarge(limits.maxFileBytes)));
      stream.on("end", () => {
        if (size <= limits.maxFileBytes) form.files.push({ field, filename: info.filename, contentType: info.mimeType, bytes: Buffer.concat(chunks) });
      });
    });
    parser.on("field", (name, value, info) => {
      if (info.valueTruncated) fail(new InvalidRequestError(`The form field '${name}' is longer than ${FIELD_LIMITS.fieldSize} bytes.`, { param: name }));
      else form.fields.push([name, value]);
    });
    parser.on("filesLimit", () => fail(new InvalidRequestError(`The form has more than ${limits.maxFiles} files.`, { code: "too_many_parts" })));
    parser.on("partsLimit", () => fail(new InvalidRequestError(`The form has too many parts (at most ${FIELD_LIMITS.parts}).`, { code: "too_many_parts" })));
    parser.on("fieldsLimit", () => fail(new InvalidRequestError(`The form has too many fields (at most ${FIELD_LIMITS.fields}).`, { code: "too_many_parts" })));
    parser.on("error", (error: Error) => {
      request.unpipe(parser);
      request.resume();
      fail(new InvalidRequestError(`The multipart body is malformed: ${error.message}.`, { code: "invalid_multipart" }));
      finish();
    });
    parser.on("close", finish);
    request.once("aborted", () => {
      fail(new InvalidRequestError("The request body ended early.", { code: "invalid_multipart" }));
      finish();
    });
    request.pipe(parser);
  });
}

function tooLarge(maxFileBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`A file in the form is larger than the ${maxFileBytes}-byte limit.`);
}
