// Bodies of the image and project endpoints as the client sends and reads them, derived from the
// server's zod schemas (z.input: what a client may send) and answer types. Type imports only:
// they are erased, so the client never loads the gateway (docs/decisions.md §1).
import type { z } from "zod";
import type { PublicImageCatalog, PublicImageModel } from "../gateway/images/image-catalog.js";
import type { ImageEditEntryInput, ImageEditRequestInput } from "../gateway/images/image-edit-request.js";
import type { imageGenerationSchema } from "../gateway/images/image-request.js";
import type { ImageResultBody as ServerImageResultBody, ImageResultItem as ServerImageResultItem } from "../gateway/images/image-results.js";
import type { ProjectBody as ServerProjectBody } from "../gateway/projects/project-request.js";

/** T without the named keys, keeping its index signature and the other keys' optionality (Omit keeps neither on an open object). */
type Without<T, K extends PropertyKey> = { [P in keyof T as P extends K ? never : P]: T[P] };

/** What a client may send to POST /v1/image/generations. */
export type ImageGenerationRequest = z.input<typeof imageGenerationSchema>;

/** One edit input: a URL or data: URL (the model's default role), or an object naming its role. */
export type ImageEditInput = ImageEditEntryInput;

/** Roles a picture plays in an edit (POST /v1/image/edits). */
export type ImageRole = NonNullable<Exclude<ImageEditInput, string>["role"]>;

/**
 * The JSON form of POST /v1/image/edits: the generation parameters plus up to four pictures.
 * `enhance_prompt` is left out: the server takes it on edits but ignores it.
 */
export type ImageEditRequest = Without<ImageEditRequestInput, "images" | "enhance_prompt"> & { images: ImageEditInput[] };

export type ImageResultItem = ServerImageResultItem;

/** Every image endpoint's answer (generations, edits, upscale, background removal). */
export type ImageResultBody = ServerImageResultBody;

export type ImageCatalogModel = PublicImageModel;

/** GET /v1/public/image-models. */
export type ImageCatalogBody = PublicImageCatalog;

export type ProjectBody = ServerProjectBody;

/** GET /v1/projects (the route wraps the project list in `data`). */
export interface ProjectListBody {
  data: ProjectBody[];
}
