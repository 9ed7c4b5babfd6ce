// A generation or edit checked against the chosen model's catalog entry and the caller's plan,
// and turned into what to ask the provider for: only what the model does natively, with what the
// gateway converts afterwards (format, compression) noted beside it. Plan caps are 403 and
// nothing is billed (docs/decisions.md §2: reject, never clamp).
import type { ImageModelEntry, ImageResolution } from "../../config/image-catalog-schema.js";
import { IMAGE_RESOLUTIONS } from "../../config/image-catalog-schema.js";
import { nearestShape } from "../../providers/aspect-ratios.js";
import type { ImageGenerateRequest, ImageOutputFormat } from "../../providers/image-types.js";
import { InvalidRequestError, PlanLimitExceededError } from "../errors.js";
import { resolveImageSize } from "./image-catalog.js";
import type { ImageGenerationBody } from "./image-request.js";
import type { ImageCallContext } from "./image-results.js";

export interface DrawPlan {
  request: ImageGenerateRequest;
  width: number;
  height: number;
  /** The format the caller gets. */
  format: ImageOutputFormat;
  /** Compression the gateway applies when converting (the vendor does not, or not in this format). */
  convertCompression?: number;
}

export interface DrawPlanOptions {
  /**
   * Width and height of the picture being edited: with no aspect_ratio, size or resolution asked
   * for, the result keeps the nearest aspect ratio the model draws instead of turning square.
   */
  inputShape?: { width: number; height: number };
}

export function planDrawing(
  model: ImageModelEntry,
  body: ImageGenerationBody,
  context: Pick<ImageCallContext, "plan" | "planName">,
  options: DrawPlanOptions = {},
): DrawPlan {
  const constraints = model.constraints;
  const provider = model.provider;
  const refuse = (param: string, message: string) => new InvalidRequestError(message, { param, provider });
  const notTaken = (param: string) => refuse(param, `The provider ${provider} does not take ${param} (model ${model.id}).`);

  const n = body.n ?? 1;
  if (n > context.plan.imageMaxN) {
    throw new PlanLimitExceededError(
      `The ${context.planName} plan draws at most ${context.plan.imageMaxN} image${context.plan.imageMaxN === 1 ? "" : "s"} per call; n was ${n}.`,
      { param: "n" },
    );
  }
  const nearest = options.inputShape ? nearestAspectRatio(model, options.inputShape) : undefined;
  if (nearest !== undefined && constraints.features.editKeepsShape) {
    const asked = body.size !== undefined ? "size" : body.aspect_ratio !== undefined && body.aspect_ratio !== nearest ? "aspect_ratio" : undefined;
    if (asked)
      throw new InvalidRequestError(`${model.id} edits keep the picture's shape (here ${nearest}); drop ${asked}.`, { param: asked, provider: model.provider });
  }
  const keepShape = body.aspect_ratio === undefined && body.size === undefined ? nearest : undefined;
  const size = resolveImageSize(model, { aspectRatio: body.aspect_ratio ?? keepShape, resolution: body.resolution, size: body.size });
  if ("error" in size) throw new InvalidRequestError(size.error.message, { param: size.error.param });
  if (tierIndex(size.resolution) > tierIndex(context.plan.imageMaxResolution)) {
    throw new PlanLimitExceededError(
      `The ${context.planName} plan draws at most ${context.plan.imageMaxResolution} resolution; this request is ${size.resolution}.`,
      { param: body.size !== undefined ? "size" : "resolution" },
    );
  }

  const asked = body.output_format ?? "webp";
  if (asked === "svg") throw refuse("output_format", `${model.id} draws raster pictures only; ask for png, jpeg or webp.`);
  const format: ImageOutputFormat = asked;
  const background = body.background;
  if (background === "transparent") {
    if (format !== "png" && format !== "webp") throw refuse("background", "A transparent background needs output_format png or webp.");
    if (!constraints.features.transparency) throw refuse("background", `The provider ${provider} cannot draw a transparent background (model ${model.id}).`);
  }
  if (body.output_compression !== undefined && format !== "webp" && format !== "jpeg") {
    throw refuse("output_compression", "output_compression applies to webp and jpeg only.");
  }
  // The vendor's own format when it has the asked one; else one to convert from (keeping alpha).
  const native: ImageOutputFormat = constraints.formats.includes(format)
    ? format
    : background === "transparent"
      ? (constraints.formats.find((candidate) => candidate === "png" || candidate === "webp") ?? constraints.formats[0]!)
      : (constraints.formats.find((candidate) => candidate === "png") ?? constraints.formats[0]!);

  const request: ImageGenerateRequest = { model: model.model, prompt: body.prompt, n, width: size.width, height: size.height, aspectRatio: size.aspectRatio };
  if (constraints.formats.length > 1 || native !== "png") request.outputFormat = native;
  if (background !== undefined && background !== "auto" && constraints.features.transparency) request.background = background;

  let convertCompression: number | undefined;
  if (body.output_compression !== undefined) {
    if (native === format && constraints.features.outputCompression) request.outputCompression = body.output_compression;
    else convertCompression = body.output_compression;
  }

  if (body.quality !== undefined && body.quality !== "auto") {
    if (!constraints.quality.accepted) throw notTaken("quality");
    if (!constraints.quality.values.includes(body.quality))
      throw refuse("quality", `${model.id} draws at quality ${constraints.quality.values.join(", ")}; not ${body.quality}.`);
    request.quality = body.quality;
  } else if (body.quality === "auto" && constraints.quality.accepted && constraints.quality.values.includes("auto")) {
    request.quality = "auto";
  }

  if (body.negative_prompt !== undefined) {
    const knob = constraints.negativePrompt;
    if (!knob.accepted) throw notTaken("negative_prompt");
    if (body.negative_prompt.length > knob.maxLength)
      throw refuse("negative_prompt", `negative_prompt is at most ${knob.maxLength} characters for ${model.id}.`);
    request.negativePrompt = body.negative_prompt;
  }
  if (body.cfg_scale !== undefined) {
    const knob = constraints.cfgScale;
    if (!knob.accepted) throw notTaken("cfg_scale");
    if (body.cfg_scale < knob.min || body.cfg_scale > knob.max) throw refuse("cfg_scale", `cfg_scale is between ${knob.min} and ${knob.max} for ${model.id}.`);
    request.cfgScale = body.cfg_scale;
  }
  if (body.style_preset !== undefined) {
    const knob = constraints.stylePresets;
    if (!knob.accepted) throw notTaken("style_preset");
    if (!knob.values.includes(body.style_preset))
      throw refuse("style_preset", `${model.id} takes the style presets ${knob.values.join(", ")} (GET /v1/image/styles); not ${body.style_preset}.`);
    request.stylePreset = body.style_preset;
  }
  if (body.seed !== undefined) {
    const knob = constraints.seed;
    if (!knob.accepted) throw notTaken("seed");
    if (body.seed < knob.min || body.seed > knob.max) throw refuse("seed", `seed is between ${knob.min} and ${knob.max} for ${model.id}.`);
    request.seed = body.seed;
  }
  const plan: DrawPlan = { request, width: size.width, height: size.height, format };
  if (convertCompression !== undefined) plan.convertCompression = convertCompression;
  return plan;
}

/** The model's aspect ratio (among those it draws at its default resolution) closest to a shape. */
function nearestAspectRatio(model: ImageModelEntry, shape: { width: number; height: number }): string | undefined {
  const constraints = model.constraints;
  const tier = constraints.defaultResolution ?? (Object.keys(constraints.resolutions)[0] as ImageResolution | undefined);
  const drawable = tier ? Object.keys(constraints.resolutions[tier] ?? {}) : constraints.aspectRatios;
  return nearestShape(drawable, ":", shape.width, shape.height);
}

function tierIndex(resolution: ImageResolution): number {
  return IMAGE_RESOLUTIONS.indexOf(resolution);
}
