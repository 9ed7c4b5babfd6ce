// Inbound POST /v1/image/edits, in either form: JSON with `images` (up to
// four: a URL or data: URL string, `{url, role}` or `{asset_id, role}`) or multipart with repeated
// `image` / `image[]` parts. Every generation parameter applies; `enhance_prompt` is ignored
// and `mask` is accepted by the parser only to be refused (docs/decisions.md §2).
import { z } from "zod";
import type { ImageRole } from "../../providers/image-types.js";
import { InvalidRequestError } from "../errors.js";
import { parseWithSchema } from "../request-schema.js";
import { type ImageGenerationBody, imageGenerationSchema } from "./image-request.js";

export const MAX_EDIT_IMAGES = 4;

/** A picture to read: text (URL, data: URL, base64), a library asset, or an uploaded part. */
export type EditImageSource = { param: string; role?: ImageRole } & (
  | { kind: "text"; value: string }
  | { kind: "asset"; assetId: string }
  | { kind: "bytes"; bytes: Buffer }
);

/** The generation parameters (enhance_prompt dropped) and the pictures. */
export type ImageEditBody = ImageGenerationBody & { images: EditImageSource[] };

const role = z.enum(["edit", "subject", "reference"], { message: "a role is edit, subject or reference" });
const urlEntry = z.object({ url: z.string().trim().min(1), role: role.optional() }).strict();
const assetEntry = z.object({ asset_id: z.string().trim().min(1), role: role.optional() }).strict();

const imageEditSchema = imageGenerationSchema.extend({
  images: z.array(z.unknown()).min(1, "send at least one picture").max(MAX_EDIT_IMAGES, `at most ${MAX_EDIT_IMAGES} pictures`),
});

/** The JSON form as a client may send it; `images` is unknown[] here, each entry is read by imageEntry. */
export type ImageEditRequestInput = z.input<typeof imageEditSchema>;
/** One `images` entry as imageEntry takes it: a URL or data: URL, `{url, role}` or `{asset_id, role}`. */
export type ImageEditEntryInput = string | z.input<typeof urlEntry> | z.input<typeof assetEntry>;

export function parseImageEdit(body: Record<string, unknown>): ImageEditBody {
  refuseMask(body.mask !== undefined && body.mask !== null);
  const { enhance_prompt: _ignored, images, ...rest } = parseWithSchema(imageEditSchema, body);
  return { ...rest, images: images.map(imageEntry) };
}

/** One `images` entry; each form is checked on its own so an error names the field at fault. */
function imageEntry(item: unknown, index: number): EditImageSource {
  const param = `images[${index}]`;
  if (typeof item === "string") {
    if (!item.trim()) throw new InvalidRequestError(`Invalid '${param}': the entry is empty.`, { param });
    return { kind: "text", value: item.trim(), param };
  }
  if (typeof item !== "object" || item === null || Array.isArray(item)) {
    throw new InvalidRequestError(`Invalid '${param}': each picture is a URL or data: URL string, {url, role} or {asset_id, role}.`, { param });
  }
  if ("asset_id" in item) {
    const entry = parseWithSchema(assetEntry, item as Record<string, unknown>, param);
    return withRole({ kind: "asset", assetId: entry.asset_id, param: `${param}.asset_id` }, entry.role);
  }
  const entry = parseWithSchema(urlEntry, item as Record<string, unknown>, param);
  return withRole({ kind: "text", value: entry.url, param: `${param}.url` }, entry.role);
}

// Scalars of the generation table that arrive as text in a form.
const INTEGER_FIELDS = new Set(["n", "seed", "output_compression"]);
const NUMBER_FIELDS = new Set(["cfg_scale"]);
const BOOLEAN_FIELDS = new Set(["enhance_prompt"]);
const IMAGE_PART_NAMES = new Set(["image", "image[]", "images", "images[]"]);

/**
 * The multipart form: `prompt`, repeated `image` / `image[]` parts (files, or text fields
 * holding a URL or data: URL), every part taking the model's default role (image-catalog.ts), and the other
 * parameters as text fields.
 */
export function imageEditFromForm(form: { fields: Array<[string, string]>; files: Array<{ field: string; bytes: Buffer }> }): ImageEditBody {
  refuseMask(form.fields.some(([name]) => name === "mask") || form.files.some((file) => file.field === "mask"));
  // A Map: field names are the caller's, and `__proto__` or `constructor` are names like any other.
  const fields = new Map<string, unknown>();
  const images: EditImageSource[] = [];
  for (const [name, value] of form.fields) {
    if (IMAGE_PART_NAMES.has(name)) {
      images.push({ kind: "text", value, param: `image[${images.length}]` });
      continue;
    }
    if (fields.has(name)) throw new InvalidRequestError(`The form field '${name}' is sent twice.`, { param: name });
    fields.set(name, formValue(name, value));
  }
  const body: Record<string, unknown> = Object.fromEntries(fields);
  for (const file of form.files) {
    if (!IMAGE_PART_NAMES.has(file.field)) {
      throw new InvalidRequestError(`Unexpected file part '${file.field}': send pictures as 'image' or 'image[]' parts.`, { param: file.field });
    }
    images.push({ kind: "bytes", bytes: file.bytes, param: `image[${images.length}]` });
  }
  if (images.length === 0)
    throw new InvalidRequestError("Missing required parameter: 'image' (send the pictures as 'image' or 'image[]' parts).", { param: "image" });
  if (images.length > MAX_EDIT_IMAGES) throw new InvalidRequestError(`Send at most ${MAX_EDIT_IMAGES} pictures.`, { param: "image" });
  const { enhance_prompt: _ignored, ...rest } = parseWithSchema(imageGenerationSchema, body);
  return { ...rest, images };
}

function formValue(name: string, value: string): unknown {
  const text = value.trim();
  if (INTEGER_FIELDS.has(name) || NUMBER_FIELDS.has(name)) {
    const number = text === "" ? Number.NaN : Number(text);
    if (!Number.isFinite(number)) throw new InvalidRequestError(`Invalid '${name}': expected a number, got "${value.slice(0, 40)}".`, { param: name });
    return number;
  }
  if (BOOLEAN_FIELDS.has(name)) {
    if (text !== "true" && text !== "false") throw new InvalidRequestError(`Invalid '${name}': expected true or false.`, { param: name });
    return text === "true";
  }
  return value;
}

function refuseMask(present: boolean): void {
  if (present) {
    throw new InvalidRequestError("Masks are not supported: describe the change in the prompt, and send the picture to change with role edit.", {
      param: "mask",
      code: "mask_unsupported",
    });
  }
}

function withRole(source: EditImageSource, value: ImageRole | undefined): EditImageSource {
  return value === undefined ? source : { ...source, role: value };
}
