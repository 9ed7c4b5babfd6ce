// Pictures for `gw image edit --image SPEC`: an http(s) or data: URL, asset:ID for a library
// picture, or a local FILE, read here and sent as a data: URL. A trailing :edit, :subject or
// :reference sets the role; only those three words count, so https://x/y.png stays a URL.
// Without a role the entry goes as a bare string (or {asset_id}), and the server applies
// the model's default role.
import { fileTypeFromBuffer } from "file-type";
import type { ImageEditInput, ImageRole } from "../client/image-types.js";
import { CliError, UsageError } from "./cli-error.js";
import { readPictureFile } from "./picture-files.js";

export const IMAGE_ROLES: readonly ImageRole[] = ["edit", "subject", "reference"];
export const MAX_EDIT_IMAGES = 4;

/** What the gateway reads (the same as its picture input). */
const SENDABLE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];

export type ImageSpec = { kind: "url" | "file" | "asset"; value: string; role?: ImageRole };

export function parseImageSpec(spec: string, label = "--image"): ImageSpec {
  let value = spec;
  let role: ImageRole | undefined;
  const suffix = /:(edit|subject|reference)$/.exec(spec);
  if (suffix) {
    role = suffix[1] as ImageRole;
    value = spec.slice(0, suffix.index);
  }
  const parsed: ImageSpec = /^asset:/i.test(value)
    ? { kind: "asset", value: value.slice("asset:".length) }
    : /^(https?|data):/i.test(value)
      ? { kind: "url", value }
      : { kind: "file", value };
  if (parsed.value === "") throw new UsageError(`${label} ${JSON.stringify(spec)} names no ${parsed.kind === "asset" ? "asset id" : "picture"}`);
  if (parsed.kind === "asset" && parsed.value.includes(":")) {
    throw new UsageError(`${label} ${spec}: the role after asset:ID must be edit, subject or reference`);
  }
  return role === undefined ? parsed : { ...parsed, role };
}

/** One spec as the edits body takes it; a local file is read now, so a bad one fails before any request. */
export async function imageEditInput(spec: string, label = "--image"): Promise<ImageEditInput> {
  const parsed = parseImageSpec(spec, label);
  if (parsed.kind === "asset") return parsed.role ? { asset_id: parsed.value, role: parsed.role } : { asset_id: parsed.value };
  const url = parsed.kind === "url" ? parsed.value : await fileAsDataUrl(parsed.value, label);
  return parsed.role ? { url, role: parsed.role } : url;
}

/** The --image flags: 1 to 4 of them, every file read before the request is sent. */
export async function imageEditInputs(specs: readonly string[]): Promise<ImageEditInput[]> {
  if (specs.length > MAX_EDIT_IMAGES) throw new UsageError(`an edit takes at most ${MAX_EDIT_IMAGES} pictures; got ${specs.length} --image flags`);
  return Promise.all(specs.map((spec) => imageEditInput(spec)));
}

/**
 * A batch line's `images`: strings in the --image syntax (files, asset:ID, roles) are resolved
 * like the flag; objects are the API's own shape and go as they are.
 */
export async function resolveLineImages(body: Record<string, unknown>): Promise<void> {
  if (!Array.isArray(body.images)) return;
  body.images = await Promise.all(body.images.map((entry: unknown) => (typeof entry === "string" ? imageEditInput(entry, "images:") : entry)));
}

async function fileAsDataUrl(file: string, label: string): Promise<string> {
  const bytes = await readPictureFile(file, label);
  const sniffed = await fileTypeFromBuffer(bytes);
  if (!sniffed || !SENDABLE_TYPES.includes(sniffed.mime)) {
    throw new CliError(`${label} ${file}: ${sniffed ? `${sniffed.mime} is` : "not"} a picture the gateway takes (PNG, JPEG, WebP or GIF)`);
  }
  return `data:${sniffed.mime};base64,${bytes.toString("base64")}`;
}
