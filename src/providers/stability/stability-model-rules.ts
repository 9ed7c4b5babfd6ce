// Stability's v2beta endpoints per vendor model (https://platform.stability.ai/docs/api-reference: Generate, Upscale, Edit). The gateway's
// vendor model ids: `ultra`, `core`, `sd3` (Stability's default SD 3.5 model) or an SD 3.5 model
// id (`sd3.5-large`, `sd3.5-flash` ..., sent as the sd3 endpoint's `model` field) for generation;
// `fast-upscale`, `conservative-upscale` for upscaling; `remove-background`.

export interface StabilityGenerateRules {
  path: string;
  /** Only the sd3 endpoint takes cfg_scale. */
  takesCfgScale: boolean;
  /**
   * How the endpoint draws from a picture (image-to-image: `image` + `strength`): ultra takes the
   * picture as it is, sd3 also needs `mode: image-to-image`; core draws from text only.
   */
  imageToImage: "none" | "image" | "mode";
  /** The sd3 endpoint's `model` form field, when a specific SD 3.5 model is named. */
  modelField?: string;
}

export interface StabilityTransformRules {
  path: string;
  outputFormats: readonly string[];
  /** The one factor the endpoint upscales by; undefined when it sizes by itself (conservative: ~4 MP). */
  factor?: number;
  /** The endpoint requires a prompt. */
  takesPrompt: boolean;
}

export const STABILITY_ASPECT_RATIOS = ["21:9", "16:9", "3:2", "5:4", "1:1", "4:5", "2:3", "9:16", "9:21"] as const;

// The style presets a model takes are catalog constraints (config/default-image-models.ts): the
// gateway refuses any other before the adapter sends `style_preset` on.

const GENERATE = "/v2beta/stable-image/generate";

export function stabilityGenerateRules(model: string): StabilityGenerateRules | undefined {
  if (model === "ultra") return { path: `${GENERATE}/ultra`, takesCfgScale: false, imageToImage: "image" };
  if (model === "core") return { path: `${GENERATE}/core`, takesCfgScale: false, imageToImage: "none" };
  if (model === "sd3") return { path: `${GENERATE}/sd3`, takesCfgScale: true, imageToImage: "mode" };
  if (/^sd3(\.\d+)?-[a-z0-9-]+$/.test(model)) return { path: `${GENERATE}/sd3`, takesCfgScale: true, imageToImage: "mode", modelField: model };
  return undefined;
}

const TRANSFORMS: Record<string, StabilityTransformRules> = {
  "fast-upscale": { path: "/v2beta/stable-image/upscale/fast", outputFormats: ["png", "jpeg", "webp"], factor: 4, takesPrompt: false },
  "conservative-upscale": { path: "/v2beta/stable-image/upscale/conservative", outputFormats: ["png", "jpeg", "webp"], takesPrompt: true },
  "remove-background": { path: "/v2beta/stable-image/edit/remove-background", outputFormats: ["png", "webp"], takesPrompt: false },
};

export function stabilityUpscaleRules(model: string): StabilityTransformRules | undefined {
  return model.endsWith("-upscale") ? TRANSFORMS[model] : undefined;
}

export function stabilityBackgroundRemovalRules(model: string): StabilityTransformRules | undefined {
  return model === "remove-background" ? TRANSFORMS[model] : undefined;
}
