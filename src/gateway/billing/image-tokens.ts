// Input tokens a vendor bills for one picture in a chat request, from its displayed size, for the
// credit reservation. Pure arithmetic; an unknown size (a remote URL nobody has fetched yet) gets
// the largest count the vendor's rule can produce for any picture, so a reservation never falls
// short. Rules as published by each vendor, read on 2026-11-24; sources are cited beside each rule.

export interface ImageSize {
  width: number;
  height: number;
}

export type ImageDetail = "low" | "high" | "auto";
export type ImageTokenRule = "openai" | "anthropic" | "gemini";

export function imageTokens(rule: ImageTokenRule, model: string, size: ImageSize | undefined, detail: ImageDetail | undefined): number {
  switch (rule) {
    case "openai":
      return openaiImageTokens(model, size, detail);
    case "anthropic":
      return anthropicImageTokens(size);
    case "gemini":
      return geminiImageTokens(size, model);
  }
}

// ---- OpenAI ----------------------------------------------------------------------------------
// Source: OpenAI "Images and vision" guide, section "Calculating costs" (platform.openai.com/docs/
// guides/images-vision), with the worked examples 1024x1024 high = 765, 2048x4096 high = 1105,
// 4096x8192 low = 85 (tile models) and 1800x2400 = 1452 patches (patch models).
//
// Tile models: "low" costs the base tokens only. Otherwise ("auto" is billed as "high", the upper
// bound) the picture is scaled down to fit 2048x2048, then down so its short side is at most 768,
// and each 512-px tile costs the tile tokens on top of the base. Base/tile per model from the
// guide's table: 85/170 (gpt-4o, gpt-4.1, gpt-4.5, gpt-4-turbo), 70/140 (gpt-5, gpt-5-chat-latest),
// 75/150 (o1, o1-pro, o3), 65/129 (computer-use-preview), 2833/5667 (gpt-4o-mini: ~33x the
// tokens at a ~1/17 price per token).
//
// Patch models: the picture is covered with 32-px patches; past 1536 patches it is scaled down to
// fit 1536 (then narrowed so its width is a whole number of patches), and the patch count, capped
// at 1536, is multiplied per model: gpt-4.1-mini 1.62, gpt-4.1-nano 2.46, o4-mini 1.72 and the
// guide's gpt-5-mini 1.62, gpt-5-nano 2.46. Forum measurements (community.openai.com "gpt-5-mini
// image input token calculation discrepancy", "Introducing GPT-5.4 mini and nano") bill gpt-5-mini
// and gpt-5.x-mini/nano at 1.2x and gpt-5-nano at 1.5x: the guide's higher figures are kept, as an
// upper bound. The same threads report that "detail" has no effect on patch models, so it is ignored
// there. codex-mini-latest is an o4-mini fine-tune and is billed like it (same forum table).
//
// Rounding follows the forum's measured edge cases (community.openai.com "Vision pricing
// calculator: inaccurate resizing/rounding"): gpt-4.1 bills 2049x513 as 8 tiles (1445) and
// 2050x513 as 4 tiles (765), so scaled sides are rounded to the nearest pixel before tiling.

type OpenAIRule = { kind: "tile"; base: number; perTile: number } | { kind: "patch"; multiplier: number };

const tile = (base: number, perTile: number): OpenAIRule => ({ kind: "tile", base, perTile });
const patch = (multiplier: number): OpenAIRule => ({ kind: "patch", multiplier });

/** Model families, first match wins; ids are matched after the vendor prefix ("openai/") is cut. */
const OPENAI_FAMILIES: ReadonlyArray<readonly [RegExp, OpenAIRule]> = [
  [/^gpt-4\.1-mini/, patch(1.62)],
  [/^gpt-4\.1-nano/, patch(2.46)],
  [/^gpt-5(\.\d+)?-mini/, patch(1.62)],
  [/^gpt-5(\.\d+)?-nano/, patch(2.46)],
  [/^(o4-mini|codex-mini)/, patch(1.72)],
  [/^gpt-4o-mini/, tile(2833, 5667)],
  [/^gpt-5/, tile(70, 140)],
  [/^o[13](-|$)/, tile(75, 150)],
  [/^computer-use-preview/, tile(65, 129)],
];
/** gpt-4o, gpt-4.1, gpt-4.5, gpt-4-turbo, and any model not in the table. */
const OPENAI_DEFAULT_RULE = tile(85, 170);

const TILE_FIT_SIDE = 2048;
const TILE_SHORT_SIDE = 768;
const TILE_SIDE = 512;
/** Most tiles a picture can take: the long side ends at most 2048 px (4 tiles), the short at most 768 (2). */
export const OPENAI_MAX_TILES = Math.ceil(TILE_FIT_SIDE / TILE_SIDE) * Math.ceil(TILE_SHORT_SIDE / TILE_SIDE); // 8

const PATCH_SIDE = 32;
/** Patch budget of a picture, and so the most patches it is billed for. */
export const OPENAI_MAX_PATCHES = 1536;

export function openaiImageTokens(model: string, size: ImageSize | undefined, detail: ImageDetail | undefined): number {
  const rule = openaiRule(model);
  const known = validSize(size);
  if (rule.kind === "patch") {
    return Math.ceil((known ? patchCount(known) : OPENAI_MAX_PATCHES) * rule.multiplier);
  }
  if (detail === "low") return rule.base;
  // Unknown size: 85 + 170 x 8 = 1445 for the default rule.
  return rule.base + rule.perTile * (known ? tileCount(known) : OPENAI_MAX_TILES);
}

function openaiRule(model: string): OpenAIRule {
  const id = modelFamilyId(model);
  return OPENAI_FAMILIES.find(([family]) => family.test(id))?.[1] ?? OPENAI_DEFAULT_RULE;
}

function tileCount({ width, height }: ImageSize): number {
  const fit = Math.min(1, TILE_FIT_SIDE / Math.max(width, height));
  const shrink = Math.min(1, TILE_SHORT_SIDE / (Math.min(width, height) * fit));
  const scale = fit * shrink;
  return sidesIn(width * scale, TILE_SIDE) * sidesIn(height * scale, TILE_SIDE);
}

function patchCount({ width, height }: ImageSize): number {
  const patches = Math.ceil(width / PATCH_SIDE) * Math.ceil(height / PATCH_SIDE);
  if (patches <= OPENAI_MAX_PATCHES) return patches;
  const shrink = Math.sqrt((OPENAI_MAX_PATCHES * PATCH_SIDE * PATCH_SIDE) / (width * height));
  const columns = Math.max(1, Math.floor((width * shrink) / PATCH_SIDE));
  // The width becomes a whole number of patches; the height follows at the same ratio (exact for
  // whole results: an integer product divided once).
  const scaledHeight = (height * columns * PATCH_SIDE) / width;
  return Math.min(OPENAI_MAX_PATCHES, columns * Math.ceil(scaledHeight / PATCH_SIDE));
}

/** Squares of `side` px needed to cover a scaled length, rounded to the nearest pixel first. */
function sidesIn(length: number, side: number): number {
  return Math.max(1, Math.ceil(Math.round(length) / side));
}

// ---- Anthropic -------------------------------------------------------------------------------
// Source: Anthropic "Vision" guide, "Evaluate image size" and "Calculate image costs"
// (platform.claude.com/docs/en/build-with-claude/vision). A picture whose long edge exceeds 1568 px,
// or that would cost more than ~1,600 tokens, is first scaled down (aspect kept); then
// tokens ~= width x height / 750 (rounded up here). The guide's examples: 200x200 ~54, 1000x1000
// ~1334, 1092x1092 ~1590. Its table of the largest sizes that are NOT resized goes up to 784x1568
// (1:2), i.e. 1,639.1 tokens, above the "~1,600" of the prose: that table is taken as the pixel
// budget, so no size the guide calls safe is undercounted, and the cap is 1,640 tokens.

const ANTHROPIC_MAX_LONG_EDGE = 1568;
const ANTHROPIC_MAX_PIXELS = 784 * 1568;
const ANTHROPIC_PIXELS_PER_TOKEN = 750;
/** The most a picture costs, and the count for an unknown size. */
export const ANTHROPIC_MAX_IMAGE_TOKENS = Math.ceil(ANTHROPIC_MAX_PIXELS / ANTHROPIC_PIXELS_PER_TOKEN); // 1640

export function anthropicImageTokens(size: ImageSize | undefined): number {
  const known = validSize(size);
  if (!known) return ANTHROPIC_MAX_IMAGE_TOKENS;
  const { width, height } = known;
  const scale = Math.min(1, ANTHROPIC_MAX_LONG_EDGE / Math.max(width, height), Math.sqrt(ANTHROPIC_MAX_PIXELS / (width * height)));
  const pixels = Math.max(1, Math.floor(width * scale)) * Math.max(1, Math.floor(height * scale));
  return Math.min(ANTHROPIC_MAX_IMAGE_TOKENS, Math.ceil(pixels / ANTHROPIC_PIXELS_PER_TOKEN));
}

// ---- Gemini ----------------------------------------------------------------------------------
// Source: Gemini API "Understand and count tokens" (ai.google.dev/gemini-api/docs/tokens) and the
// Vertex AI / Firebase "input file requirements" page: a picture with both sides <= 384 px is 258
// tokens; a larger one is scaled down (aspect kept) to fit 3072x3072 and cut into 768x768 tiles,
// 258 tokens each. Gemini 3 models instead bill a fixed budget set by media_resolution
// (ai.google.dev/gemini-api/docs/media-resolution): images default to "high", 1,120 tokens,
// whatever their size (low 280, medium 560; "ultra high", 2,240, only when a request asks for it
// per part, which the reservation cannot see).

const GEMINI_TOKENS_PER_TILE = 258;
const GEMINI_SMALL_SIDE = 384;
const GEMINI_TILE_SIDE = 768;
const GEMINI_FIT_SIDE = 3072;
/** The most the tile rule gives: a picture fitted to 3072x3072 spans at most 4 x 4 tiles. */
export const GEMINI_MAX_TILED_TOKENS = GEMINI_TOKENS_PER_TILE * Math.ceil(GEMINI_FIT_SIDE / GEMINI_TILE_SIDE) ** 2; // 4128
/** Gemini 3 and later: the default ("high") media resolution of an image. */
export const GEMINI_3_IMAGE_TOKENS = 1120;

/** `model` selects the Gemini 3 budget; without it (or for Gemini 1.x/2.x) the tile rule applies. */
export function geminiImageTokens(size: ImageSize | undefined, model?: string): number {
  const major = /^gemini-(\d+)/.exec(modelFamilyId(model ?? ""))?.[1];
  if (major !== undefined && Number(major) >= 3) return GEMINI_3_IMAGE_TOKENS;
  const known = validSize(size);
  if (!known) return GEMINI_MAX_TILED_TOKENS;
  const { width, height } = known;
  if (width <= GEMINI_SMALL_SIDE && height <= GEMINI_SMALL_SIDE) return GEMINI_TOKENS_PER_TILE;
  const fit = Math.min(1, GEMINI_FIT_SIDE / Math.max(width, height));
  return GEMINI_TOKENS_PER_TILE * sidesIn(width * fit, GEMINI_TILE_SIDE) * sidesIn(height * fit, GEMINI_TILE_SIDE);
}

// ---- shared ----------------------------------------------------------------------------------

/** "openai/gpt-4o-2024-08-06" -> "gpt-4o-2024-08-06", "models/gemini-2.5-pro" -> "gemini-2.5-pro". */
function modelFamilyId(model: string): string {
  return model.trim().toLowerCase().replace(/^.*\//, "").replace(/^ft:/, "");
}

/** A size with two positive finite sides, or undefined (treated as unknown). */
function validSize(size: ImageSize | undefined): ImageSize | undefined {
  if (size === undefined) return undefined;
  const { width, height } = size;
  return Number.isFinite(width) && Number.isFinite(height) && width > 0 && height > 0 ? size : undefined;
}
