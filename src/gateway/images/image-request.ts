// Inbound POST /v1/image/generations body: every parameter the endpoint takes, checked for shape here;
// what depends on the chosen model (sizes, knobs, formats) is checked against its catalog entry
// (image-draw-plan.ts). The edits body extends it (image-edit-request.ts).
import { z } from "zod";
import { InvalidRequestError } from "../errors.js";
import { parseWithSchema } from "../request-schema.js";

/** Fields that carry pictures: they belong to the edits endpoint. */
const IMAGE_FIELDS = ["images", "image", "image[]", "image_url", "mask", "init_image"] as const;

export const imageGenerationSchema = z
  .object({
    prompt: z.string().trim().min(1, "the prompt is empty"),
    model: z.string().min(1).optional(),
    n: z.number().int().min(1).optional(),
    aspect_ratio: z.enum(["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"]).optional(),
    output_format: z.enum(["png", "jpeg", "webp", "svg"]).optional(),
    seed: z.number().int().min(0).optional(),
    quality: z.enum(["auto", "low", "medium", "high"]).optional(),
    background: z.enum(["auto", "transparent", "opaque"]).optional(),
    resolution: z.enum(["512", "1K", "2K", "4K"]).optional(),
    size: z.string().min(1).optional(),
    output_compression: z.number().int().min(0).max(100).optional(),
    response_format: z.literal("b64_json", { message: "only b64_json is served; images are never returned as URLs" }).optional(),
    negative_prompt: z.string().optional(),
    cfg_scale: z.number().optional(),
    style_preset: z.string().min(1).optional(),
    enhance_prompt: z.boolean().optional(),
    project_id: z.string().optional(),
    parent_asset_id: z.string().optional(),
  })
  .loose();

export type ImageGenerationBody = z.infer<typeof imageGenerationSchema>;

export function parseImageGeneration(body: Record<string, unknown>): ImageGenerationBody {
  for (const field of IMAGE_FIELDS) {
    if (body[field] !== undefined && body[field] !== null) {
      throw new InvalidRequestError(`This endpoint draws from text only; to send pictures ('${field}'), use POST /v1/image/edits.`, { param: field });
    }
  }
  return parseWithSchema(imageGenerationSchema, body);
}
