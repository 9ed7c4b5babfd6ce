// Vendor-neutral image requests -> OpenAI Images requests (https://platform.openai.com/docs/api-reference/images/create, /images/createEdit):
// a JSON body for generations, multipart parts for edits. What the model cannot do is refused
// here, before any upstream call, never dropped.

import { nearestShape } from "../aspect-ratios.js";
import { imageFileName } from "../image-bytes.js";
import type { ImageEditRequest, ImageGenerateRequest, ImageQuality, ImageRole } from "../image-types.js";
import type { MultipartPart } from "../multipart-body.js";
import { UnsupportedContentError } from "../provider-errors.js";
import { type OpenAIImageModelRules, openaiImageModelRules } from "./openai-image-model-rules.js";

/** The generations body for one call drawing `count` pictures. */
export function convertToOpenAIGeneration(request: ImageGenerateRequest, count: number): Record<string, unknown> {
  const rules = openaiImageModelRules(request.model);
  return { model: request.model, prompt: request.prompt, n: count, ...outputOptions(request, rules) };
}

/** The edits form for one call drawing `count` pictures: scalars as strings, pictures as `image[]`. */
export function convertToOpenAIEdit(request: ImageEditRequest, count: number): MultipartPart[] {
  const rules = openaiImageModelRules(request.model);
  if (!rules.canEdit) throw new UnsupportedContentError(`OpenAI's ${request.model} does not edit pictures.`, "model");
  if (request.images.length === 0) throw new UnsupportedContentError("An edit needs at least one picture.", "images");
  // dall-e-2 edits exactly one picture, sent as `image`; GPT image models take repeated `image[]`.
  if (rules.family === "dall-e-2" && request.images.length > 1) {
    throw new UnsupportedContentError(`OpenAI's ${request.model} edits one picture at a time.`, "images");
  }
  const fieldName = rules.family === "dall-e-2" ? "image" : "image[]";
  const prompt = promptWithRoles(
    request.prompt,
    request.images.map((image) => image.role),
  );
  const parts: MultipartPart[] = [
    { name: "model", value: request.model },
    { name: "prompt", value: prompt },
    { name: "n", value: String(count) },
  ];
  for (const [name, value] of Object.entries(outputOptions(request, rules))) parts.push({ name, value: String(value) });
  request.images.forEach((image, index) => {
    parts.push({ name: fieldName, filename: imageFileName(`image-${index + 1}`, image.mediaType), contentType: image.mediaType, bytes: image.bytes });
  });
  return parts;
}

const ROLE_HINTS: Record<ImageRole, string> = {
  edit: "the picture to change; keep everything the prompt does not mention.",
  subject: "a person or object to keep as it is, placed in the new picture.",
  reference: "a reference; borrow only what the prompt asks for (style, layout or detail).",
};

/**
 * OpenAI's edits take pictures without roles, so each role is told in the prompt. One picture
 * to edit needs no words: that is what the endpoint does.
 */
export function promptWithRoles(prompt: string, roles: readonly ImageRole[]): string {
  if (roles.length === 1 && roles[0] === "edit") return prompt;
  const lines = roles.map((role, index) => `Image ${index + 1}: ${ROLE_HINTS[role]}`);
  return `${prompt}\n\n${lines.join("\n")}`;
}

/** `WxH` from the resolved size, else the model's fixed size nearest the aspect ratio, else the vendor's default. */
export function openaiImageSize(request: Pick<ImageGenerateRequest, "width" | "height" | "aspectRatio">, rules: OpenAIImageModelRules): string | undefined {
  if (request.width !== undefined && request.height !== undefined) return `${request.width}x${request.height}`;
  if (request.aspectRatio === undefined) return undefined;
  const wanted = ratioOf(request.aspectRatio, ":");
  if (wanted === undefined) throw new UnsupportedContentError(`The aspect ratio "${request.aspectRatio}" is not W:H.`, "aspect_ratio");
  return nearestShape(rules.sizes, "x", wanted, 1);
}

function outputOptions(request: ImageGenerateRequest, rules: OpenAIImageModelRules): Record<string, string | number> {
  refuseDiffusionKnobs(request);
  const options: Record<string, string | number> = {};
  const size = openaiImageSize(request, rules);
  if (size !== undefined) options.size = size;
  const quality = qualityFor(request.quality, rules);
  if (quality !== undefined) options.quality = quality;
  if (rules.takesOutputOptions) {
    if (request.background !== undefined) options.background = request.background;
    if (request.outputFormat !== undefined) options.output_format = request.outputFormat;
    if (request.outputCompression !== undefined) options.output_compression = request.outputCompression;
  } else {
    // DALL·E draws opaque PNGs: anything else is the gateway's conversion to make, not the vendor's.
    if (request.outputFormat !== undefined && request.outputFormat !== "png") {
      throw new UnsupportedContentError(`OpenAI's ${request.model} draws PNG only.`, "output_format");
    }
    if (request.background === "transparent")
      throw new UnsupportedContentError(`OpenAI's ${request.model} cannot draw a transparent background.`, "background");
    if (request.outputCompression !== undefined)
      throw new UnsupportedContentError(`OpenAI's ${request.model} does not take output_compression.`, "output_compression");
  }
  // Base64 always: a URL would be one more download, from a host that forgets it in 60 minutes.
  if (rules.takesResponseFormat) options.response_format = "b64_json";
  return options;
}

function qualityFor(quality: ImageQuality | undefined, rules: OpenAIImageModelRules): string | undefined {
  if (quality === undefined || quality === "auto") return rules.family === "gpt-image" ? quality : undefined;
  if (rules.family === "gpt-image") return quality;
  if (rules.family === "dall-e-3") return quality === "high" ? "hd" : "standard";
  return "standard";
}

function refuseDiffusionKnobs(request: ImageGenerateRequest): void {
  const knobs: Array<[unknown, string]> = [
    [request.negativePrompt, "negative_prompt"],
    [request.cfgScale, "cfg_scale"],
    [request.stylePreset, "style_preset"],
    [request.seed, "seed"],
  ];
  for (const [value, param] of knobs) {
    if (value !== undefined) throw new UnsupportedContentError(`OpenAI image models do not take ${param}.`, param);
  }
}

function ratioOf(text: string, separator: string): number | undefined {
  const [width, height] = text.split(separator).map(Number);
  return width && height && width > 0 && height > 0 ? width / height : undefined;
}
