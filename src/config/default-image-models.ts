// The built-in image catalog: OpenAI's GPT image and DALL·E 3 models, Stability's generate,
// upscale and background-removal endpoints, and the local engines (sharp on this machine, free).
// An entry is only offered when its provider is configured and the tool's allowlist names it.
//
// Prices are credits (1 credit = $0.000001) from the vendors' public price lists as of 2025; the
// lists change without notice, so every number here is an estimate for the
// operator to check:
// - gpt-image-1 bills output tokens; per picture that is $0.011 / $0.042 / $0.167 (low / medium /
//   high) at 1024x1024 and $0.016 / $0.063 / $0.25 at 1536x1024, which is the same rate per
//   megapixel. `auto` is billed as high until the vendor says which quality it drew.
// - dall-e-2 is $0.016 / $0.018 / $0.02 at 256 / 512 / 1024 pixels square: $0.02 per picture.
// - dall-e-3 is $0.04 standard / $0.08 hd at 1024x1024 and $0.08 / $0.12 at 1792x1024; one
//   per-megapixel rate cannot match both, so each is the rate that bills no size below its price.
//   Quality `auto` (its default) is held at the hd rate and billed at the quality the answer names,
//   standard when it names none (what DALL·E 3 draws when gw sends no quality).
// - Stability: 1 Stability credit = $0.01. Ultra 8, Core 3, SD 3.5 Large 6.5, fast upscale 2,
//   conservative upscale 40, remove background 5 credits per picture.
// Stability sizes pictures by aspect ratio itself: the sizes below are its nominal ~1 megapixel
// sizes (Core draws nearer 1.5 megapixels); the real size is in the picture's bytes.
import type { ImageModelInput } from "./image-catalog-schema.js";

// Stability's ratios that a request's aspect_ratio can name (image-request.ts): all but its 9:21.
const SPEC_STABILITY_RATIOS = ["1:1", "21:9", "16:9", "3:2", "5:4", "4:5", "2:3", "9:16"];

const STABILITY_SIZES: Record<string, string> = {
  "1:1": "1024x1024",
  "21:9": "1536x640",
  "16:9": "1344x768",
  "3:2": "1216x832",
  "5:4": "1152x896",
  "4:5": "896x1152",
  "2:3": "832x1216",
  "9:16": "768x1344",
};

const STABILITY_STYLE_PRESETS = [
  "enhance",
  "anime",
  "photographic",
  "digital-art",
  "comic-book",
  "fantasy-art",
  "line-art",
  "analog-film",
  "neon-punk",
  "isometric",
  "low-poly",
  "origami",
  "modeling-compound",
  "cinematic",
  "3d-model",
  "pixel-art",
  "tile-texture",
];

/** `edits`: draws from a picture too (image-to-image: the picture to edit, one per call). */
function stabilityGenerator(model: string, name: string, perImage: number, cfgScale: boolean, edits: boolean, description: string): ImageModelInput {
  return {
    id: `stability/${model}`,
    provider: "stability",
    model,
    name,
    description,
    operations: edits ? ["generate", "edit"] : ["generate"],
    constraints: {
      aspectRatios: SPEC_STABILITY_RATIOS,
      defaultAspectRatio: "1:1",
      formats: ["png", "jpeg", "webp"],
      resolutions: { "1K": STABILITY_SIZES },
      defaultResolution: "1K",
      negativePrompt: { accepted: true, maxLength: 10_000 },
      cfgScale: cfgScale ? { accepted: true, min: 1, max: 10, default: 4 } : { accepted: false },
      stylePresets: { accepted: true, values: STABILITY_STYLE_PRESETS },
      seed: { accepted: true, min: 0, max: 4_294_967_294 },
      ...(edits ? { referenceRoles: ["edit" as const], maxReferences: 1, features: { editKeepsShape: true } } : {}),
    },
    pricing: { perImage },
  };
}

export const DEFAULT_IMAGE_MODEL_INPUTS: ImageModelInput[] = [
  {
    id: "openai/gpt-image-1",
    provider: "openai",
    model: "gpt-image-1",
    name: "GPT Image 1",
    description: "OpenAI's GPT image model: follows long prompts, edits and combines up to four pictures, draws transparent backgrounds.",
    operations: ["generate", "edit"],
    constraints: {
      aspectRatios: ["1:1", "3:2", "2:3"],
      defaultAspectRatio: "1:1",
      formats: ["png", "jpeg", "webp"],
      resolutions: { "1K": { "1:1": "1024x1024", "3:2": "1536x1024", "2:3": "1024x1536" } },
      defaultResolution: "1K",
      features: { transparency: true, explicitSize: true, outputCompression: true },
      quality: { accepted: true, values: ["auto", "low", "medium", "high"], default: "auto" },
      // The vendor takes 16 pictures per edit; /v1/image/edits takes at most 4 (MAX_EDIT_IMAGES).
      referenceRoles: ["reference", "edit", "subject"],
      maxReferences: 4,
    },
    pricing: { perMegapixel: 159_300, byQuality: { low: 10_500, medium: 40_100, high: 159_300 } },
  },
  {
    id: "openai/dall-e-3",
    provider: "openai",
    model: "dall-e-3",
    name: "DALL·E 3",
    description: "OpenAI's DALL·E 3: one picture per call (n > 1 makes several calls), rewrites the prompt and reports the rewrite.",
    operations: ["generate"],
    constraints: {
      aspectRatios: ["1:1", "16:9", "9:16"],
      defaultAspectRatio: "1:1",
      formats: ["png"],
      // 1792x1024 is 7:4, the nearest DALL·E 3 draws to 16:9.
      resolutions: { "1K": { "1:1": "1024x1024", "16:9": "1792x1024", "9:16": "1024x1792" } },
      defaultResolution: "1K",
      features: { explicitSize: true, revisedPrompt: true },
      // medium is DALL·E's `standard`, high its `hd`.
      quality: { accepted: true, values: ["auto", "medium", "high"], default: "auto" },
    },
    pricing: { perMegapixel: 43_600, byQuality: { high: 76_300 } },
  },
  {
    id: "openai/dall-e-2",
    provider: "openai",
    model: "dall-e-2",
    name: "DALL·E 2",
    description: "OpenAI's DALL·E 2: square pictures only; edits one picture at a time (the picture to change, no references).",
    operations: ["generate", "edit"],
    constraints: {
      aspectRatios: ["1:1"],
      defaultAspectRatio: "1:1",
      formats: ["png"],
      resolutions: { "512": { "1:1": "512x512" }, "1K": { "1:1": "1024x1024" } },
      defaultResolution: "1K",
      features: { explicitSize: true },
      referenceRoles: ["edit"],
      maxReferences: 1,
    },
    pricing: { perImage: 20_000 },
  },
  stabilityGenerator(
    "core",
    "Stable Image Core",
    30_000,
    false,
    false,
    "Stability's fast, inexpensive text-to-image model; negative prompts, style presets and seeds.",
  ),
  stabilityGenerator(
    "ultra",
    "Stable Image Ultra",
    80_000,
    false,
    true,
    "Stability's highest-quality model; negative prompts, style presets and seeds; edits one picture (image-to-image, keeps its shape).",
  ),
  stabilityGenerator(
    "sd3",
    "Stable Diffusion 3.5 Large",
    65_000,
    true,
    true,
    "Stable Diffusion 3.5 Large; negative prompts, cfg_scale, style presets and seeds; edits one picture (image-to-image, keeps its shape).",
  ),
  {
    id: "stability/fast-upscale",
    provider: "stability",
    model: "fast-upscale",
    name: "Stability Fast Upscaler",
    description: "Upscales by 4 in about a second; input up to 1 megapixel (sides 32 to 1536 pixels).",
    operations: ["upscale"],
    constraints: { upscaleFactors: [4], transformFormats: ["png", "jpeg", "webp"] },
    pricing: { perImage: 20_000 },
  },
  {
    id: "stability/conservative-upscale",
    provider: "stability",
    model: "conservative-upscale",
    name: "Stability Conservative Upscaler",
    description: "Upscales to about 4 megapixels whatever the input size, keeping the picture's content; takes no scale.",
    operations: ["upscale"],
    constraints: { upscaleFactors: [], transformFormats: ["png", "jpeg", "webp"] },
    pricing: { perImage: 400_000 },
  },
  {
    id: "stability/remove-background",
    provider: "stability",
    model: "remove-background",
    name: "Stability Remove Background",
    description: "Cuts the subject out onto a transparent background; input up to about 4 megapixels.",
    operations: ["background"],
    constraints: { transformFormats: ["png", "webp"] },
    pricing: { perImage: 50_000 },
  },
  // The local engines say plainly what they are: resampling and colour keying, no AI model.
  {
    id: "local/lanczos",
    provider: "local",
    model: "lanczos",
    name: "Lanczos resampling (local)",
    description:
      "Enlarges by exactly 2 (the default) or 4 with sharp's lanczos3 resampling on this machine: crisp edges, no invented detail (not an AI upscaler). Output up to 64 megapixels. Free.",
    operations: ["upscale"],
    constraints: { upscaleFactors: [2, 4], transformFormats: ["png", "webp"] },
    pricing: { perImage: 0 },
  },
  {
    id: "local/flat-background",
    provider: "local",
    model: "flat-background",
    name: "Flat background remover (local)",
    description:
      "Makes a flat, one-colour background transparent (product shots, studio backdrops, scans) by colour distance from the picture's border, with soft edges. Not a segmentation model: it only works on flat or uniform backgrounds and refuses pictures whose border is not one colour. Input up to 25 megapixels. Free, on this machine.",
    operations: ["background"],
    constraints: { transformFormats: ["png", "webp"] },
    pricing: { perImage: 0 },
  },
];
