// What clients send to OpenAI's Files API (/v1/files): the list query and the text fields of the
// upload form. Every refusal is a 400 naming the parameter, in the OpenAI envelope (these paths
// are not /v1/storage's).
import { FILE_PURPOSES, type FilePurpose, isFilePurpose, isUploadPurpose, UPLOAD_PURPOSES, type UploadPurpose } from "../../store/file-records.js";
import { InvalidRequestError } from "../errors.js";
import { isFileId } from "./stored-file.js";

export interface FileListQuery {
  /** A file id: the page starts just past it (OpenAI's cursor). */
  after?: string;
  limit: number;
  order: "asc" | "desc";
  /** Only the files of this purpose. */
  purpose?: FilePurpose;
}

/** OpenAI's bounds and default for `limit`. */
export const FILE_LIST_MAX_LIMIT = 10_000;

const PURPOSE_NAMES = FILE_PURPOSES.join(", ");
const UPLOAD_PURPOSE_NAMES = UPLOAD_PURPOSES.join(", ");

/** limit: 1 to 10000, default 10000; order: asc or desc, default desc; after: a file id; purpose: one of the purposes. Never clamped. */
export function parseFileListQuery(query: URLSearchParams): FileListQuery {
  const parsed: FileListQuery = { limit: FILE_LIST_MAX_LIMIT, order: "desc" };
  const limit = single(query, "limit");
  if (limit !== undefined) {
    const value = Number(limit);
    if (limit.trim() === "" || !Number.isInteger(value) || value < 1 || value > FILE_LIST_MAX_LIMIT) {
      throw invalid("limit", `\`limit\` must be a whole number from 1 to ${FILE_LIST_MAX_LIMIT}.`);
    }
    parsed.limit = value;
  }
  const order = single(query, "order");
  if (order !== undefined) {
    if (order !== "asc" && order !== "desc") throw invalid("order", "`order` must be `asc` or `desc`.");
    parsed.order = order;
  }
  const after = single(query, "after");
  if (after !== undefined) {
    if (!isFileId(after)) throw invalid("after", "`after` must be the id of a file (`file_...`), as the last one of the previous page.");
    parsed.after = after;
  }
  const purpose = single(query, "purpose");
  if (purpose !== undefined) parsed.purpose = purposeOf(purpose);
  return parsed;
}

/**
 * The text fields of `POST /v1/files`, in whatever order they arrive (before or after the file's
 * bytes): `purpose` is required, once; `expires_after` (an object the SDK sends as
 * `expires_after[anchor]` and `expires_after[seconds]`) is refused, since gw keeps files until
 * they are deleted. Other fields are left alone, as on /v1/storage/upload.
 */
export class FileUploadFields {
  private purposeSent: UploadPurpose | undefined;

  /** One text field as it arrives; throws for a field that refuses the upload. */
  accept(name: string, value: string): void {
    if (name === "expires_after" || name.startsWith("expires_after[")) {
      throw invalid("expires_after", "`expires_after` is not supported by this gateway: files are kept until they are deleted.");
    }
    if (name !== "purpose") return;
    if (this.purposeSent !== undefined) throw invalid("purpose", "Send `purpose` once.");
    if (!isUploadPurpose(value)) throw invalid("purpose", `\`purpose\` must be one of ${UPLOAD_PURPOSE_NAMES}.`);
    this.purposeSent = value;
  }

  /** The purpose sent, once the whole form is read: 400 when there was none. */
  requiredPurpose(): UploadPurpose {
    if (this.purposeSent === undefined) throw invalid("purpose", `\`purpose\` is required: one of ${UPLOAD_PURPOSE_NAMES}.`);
    return this.purposeSent;
  }
}

function purposeOf(value: string): FilePurpose {
  if (!isFilePurpose(value)) throw invalid("purpose", `\`purpose\` must be one of ${PURPOSE_NAMES}.`);
  return value;
}

/** A query parameter sent at most once. */
function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw invalid(name, `Send \`${name}\` once.`);
  return values[0];
}

function invalid(param: string, message: string): InvalidRequestError {
  return new InvalidRequestError(message, { param });
}
