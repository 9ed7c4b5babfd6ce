// Inbound POST /v1/image/upscale and /v1/image/background-removal bodies: one
// picture, as `image` (http(s) URL, data: URL or bare base64) or, with no image, the library
// picture `parent_asset_id` names. Whether `scale` is one the model offers is checked against its
// catalog entry (image-transform-service.ts); a factor is never rounded, so it must be an integer.
import { z } from "zod";
import { InvalidRequestError } from "../errors.js";
import { parseWithSchema } from "../request-schema.js";

export type TransformFormat = "png" | "webp";

export interface ImageTransformBody {
  image?: string;
  scale?: number;
  output_format?: TransformFormat;
  model?: string;
  project_id?: string;
  parent_asset_id?: string;
}

const common = {
  image: z.string().trim().min(1, "the image is empty").optional(),
  model: z.string().min(1).optional(),
  project_id: z.string().optional(),
  parent_asset_id: z.string().trim().min(1, "the asset id is empty").optional(),
};

const upscaleSchema = z
  .object({
    ...common,
    scale: z.number().int("an upscale factor is a whole number").positive().optional(),
    output_format: z.enum(["png", "webp"], { message: "upscaled pictures are png or webp" }).optional(),
  })
  .loose();

const backgroundRemovalSchema = z
  .object({
    ...common,
    output_format: z.enum(["png", "webp"], { message: "background removal answers png or webp (jpeg has no transparency)" }).optional(),
  })
  .loose();

/** POST /v1/image/upscale as a client may send it. */
export type ImageUpscaleInput = z.input<typeof upscaleSchema>;
/** POST /v1/image/background-removal as a client may send it. */
export type BackgroundRemovalInput = z.input<typeof backgroundRemovalSchema>;

export function parseImageUpscale(body: Record<string, unknown>): ImageTransformBody {
  return withPicture(parseWithSchema(upscaleSchema, body));
}

export function parseBackgroundRemoval(body: Record<string, unknown>): ImageTransformBody {
  if (body.scale !== undefined && body.scale !== null) throw new InvalidRequestError("Background removal takes no 'scale'.", { param: "scale" });
  return withPicture(parseWithSchema(backgroundRemovalSchema, body));
}

function withPicture(body: ImageTransformBody): ImageTransformBody {
  if (body.image === undefined && body.parent_asset_id === undefined) {
    throw new InvalidRequestError("Missing required parameter: 'image' (or 'parent_asset_id' to use a picture from your library).", { param: "image" });
  }
  return body;
}
