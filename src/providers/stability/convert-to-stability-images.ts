// Vendor-neutral image requests -> Stability v2beta multipart forms (https://platform.stability.ai/docs/api-reference).
// Stability draws one picture per call, sized by aspect ratio; what it cannot do is refused here.

import { nearestShape } from "../aspect-ratios.js";
import { imageFileName } from "../image-bytes.js";
import type { ImageEditRequest, ImageGenerateRequest, ImageTransformRequest } from "../image-types.js";
import type { MultipartPart } from "../multipart-body.js";
import { UnsupportedContentError } from "../provider-errors.js";
import {
  STABILITY_ASPECT_RATIOS,
  type StabilityTransformRules,
  stabilityBackgroundRemovalRules,
  stabilityGenerateRules,
  stabilityUpscaleRules,
} from "./stability-model-rules.js";

export interface StabilityCall {
  path: string;
  parts: MultipartPart[];
}

/** Seeds run 0 ... 4294967294 at Stability. */
const SEED_LIMIT = 4_294_967_295;

/**
 * Guidance the conservative upscaler requires; POST /v1/image/upscale takes no prompt,
 * so a neutral one asks for the same picture, sharper.
 */
export const DEFAULT_UPSCALE_PROMPT = "The same image at a higher resolution, sharp and detailed, unchanged in content.";

/** The form for picture `index` of the request (seeded pictures use seed + index, so they differ). */
export function convertToStabilityGeneration(request: ImageGenerateRequest, index: number): StabilityCall {
  const rules = stabilityGenerateRules(request.model);
  if (!rules) throw new UnsupportedContentError(`Stability has no image model "${request.model}".`, "model");
  refuseOutputOptions(request);
  if (request.cfgScale !== undefined && !rules.takesCfgScale) {
    throw new UnsupportedContentError(`Stability's ${request.model} does not take cfg_scale.`, "cfg_scale");
  }
  const parts: MultipartPart[] = [{ name: "prompt", value: request.prompt }];
  if (rules.modelField) parts.push({ name: "model", value: rules.modelField });
  const aspectRatio = stabilityAspectRatio(request);
  if (aspectRatio !== undefined) parts.push({ name: "aspect_ratio", value: aspectRatio });
  if (request.negativePrompt !== undefined) parts.push({ name: "negative_prompt", value: request.negativePrompt });
  if (request.cfgScale !== undefined) parts.push({ name: "cfg_scale", value: String(request.cfgScale) });
  if (request.stylePreset !== undefined) parts.push({ name: "style_preset", value: request.stylePreset });
  if (request.seed !== undefined) parts.push({ name: "seed", value: String((request.seed + index) % SEED_LIMIT) });
  if (request.outputFormat !== undefined) parts.push({ name: "output_format", value: request.outputFormat });
  return { path: rules.path, parts };
}

/**
 * How far image-to-image may move from the picture (Stability's `strength`, 0-1): the gateway's
 * `edit` role keeps what the prompt does not mention, so the change is moderate.
 */
export const STABILITY_EDIT_STRENGTH = 0.5;

/**
 * An edit is image-to-image on ultra or sd3: one picture, role `edit`, and the generation's knobs.
 * The picture sets the shape, so no aspect_ratio is sent (sd3 takes it for text-to-image only).
 */
export function convertToStabilityEdit(request: ImageEditRequest, index: number): StabilityCall {
  const rules = stabilityGenerateRules(request.model);
  if (!rules || rules.imageToImage === "none") throw new UnsupportedContentError(`Stability's ${request.model} does not draw from a picture.`, "model");
  const [picture, ...others] = request.images;
  if (!picture || others.length > 0) throw new UnsupportedContentError(`Stability's ${request.model} edits exactly one picture.`, "images");
  if (picture.role !== "edit") throw new UnsupportedContentError(`Stability's ${request.model} takes a picture to edit, not a ${picture.role}.`, "images");
  const { aspectRatio: _ratio, width: _width, height: _height, images: _images, ...fromText } = request;
  const { parts, path } = convertToStabilityGeneration(fromText, index);
  parts.push({ name: "image", filename: imageFileName("image", picture.mediaType), contentType: picture.mediaType, bytes: picture.bytes });
  parts.push({ name: "strength", value: String(STABILITY_EDIT_STRENGTH) });
  if (rules.imageToImage === "mode") parts.push({ name: "mode", value: "image-to-image" });
  return { path, parts };
}

export function convertToStabilityUpscale(request: ImageTransformRequest): StabilityCall {
  const rules = stabilityUpscaleRules(request.model);
  if (!rules) throw new UnsupportedContentError(`Stability has no upscaler "${request.model}".`, "model");
  if (request.scale !== undefined && request.scale !== rules.factor) {
    const offered = rules.factor === undefined ? "sizes its output itself (about 4 megapixels) and takes no scale" : `upscales by ${rules.factor} only`;
    throw new UnsupportedContentError(`Stability's ${request.model} ${offered}.`, "scale");
  }
  return transformCall(request, rules);
}

export function convertToStabilityBackgroundRemoval(request: ImageTransformRequest): StabilityCall {
  const rules = stabilityBackgroundRemovalRules(request.model);
  if (!rules) throw new UnsupportedContentError(`Stability has no background remover "${request.model}".`, "model");
  if (request.scale !== undefined) throw new UnsupportedContentError("Background removal takes no scale.", "scale");
  return transformCall(request, rules);
}

/** The aspect ratio asked for, else the one of Stability's nearest the resolved size, else Stability's default (1:1). */
export function stabilityAspectRatio(request: Pick<ImageGenerateRequest, "aspectRatio" | "width" | "height">): string | undefined {
  if (request.aspectRatio !== undefined) {
    if (!(STABILITY_ASPECT_RATIOS as readonly string[]).includes(request.aspectRatio)) {
      throw new UnsupportedContentError(`Stability draws the aspect ratios ${STABILITY_ASPECT_RATIOS.join(", ")}; not ${request.aspectRatio}.`, "aspect_ratio");
    }
    return request.aspectRatio;
  }
  if (!request.width || !request.height) return undefined;
  return nearestShape(STABILITY_ASPECT_RATIOS, ":", request.width, request.height);
}

function transformCall(request: ImageTransformRequest, rules: StabilityTransformRules): StabilityCall {
  if (request.outputFormat !== undefined && !rules.outputFormats.includes(request.outputFormat)) {
    throw new UnsupportedContentError(
      `Stability's ${request.model} answers ${rules.outputFormats.join(" or ")}; not ${request.outputFormat}.`,
      "output_format",
    );
  }
  const parts: MultipartPart[] = [
    { name: "image", filename: imageFileName("image", request.image.mediaType), contentType: request.image.mediaType, bytes: request.image.bytes },
  ];
  if (rules.takesPrompt) parts.push({ name: "prompt", value: request.prompt ?? DEFAULT_UPSCALE_PROMPT });
  else if (request.prompt !== undefined) throw new UnsupportedContentError(`Stability's ${request.model} takes no prompt.`, "prompt");
  if (request.outputFormat !== undefined) parts.push({ name: "output_format", value: request.outputFormat });
  return { path: rules.path, parts };
}

function refuseOutputOptions(request: ImageGenerateRequest): void {
  if (request.quality !== undefined && request.quality !== "auto") {
    throw new UnsupportedContentError("Stability image models do not take quality.", "quality");
  }
  if (request.background === "transparent") {
    throw new UnsupportedContentError("Stability image models cannot draw a transparent background.", "background");
  }
  if (request.outputCompression !== undefined) {
    throw new UnsupportedContentError("Stability image models do not take output_compression.", "output_compression");
  }
}
