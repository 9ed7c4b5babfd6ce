// The image models in the config's catalog (docs/decisions.md §6): per model, which provider serves it,
// what it can do (its `constraints`, as the public catalog shows them) and its price in credits. The
// built-in entries are in default-image-models.ts; a config that lists `catalog.image` replaces
// them as a whole.
import { z } from "zod";
import { catalogEntryFields, uniqueIds } from "./catalog-entry-fields.js";

const nonNegativeInt = z.number().int().nonnegative();
const positiveInt = z.number().int().positive();

export const IMAGE_RESOLUTIONS = ["512", "1K", "2K", "4K"] as const;
export const IMAGE_OPERATIONS = ["generate", "edit", "upscale", "background"] as const;

const aspectRatio = z.string().regex(/^[1-9]\d*:[1-9]\d*$/, "an aspect ratio is W:H");
const pixelSize = z.string().regex(/^[1-9]\d*x[1-9]\d*$/, "a size is WIDTHxHEIGHT");
const imageFormat = z.enum(["png", "jpeg", "webp"]);
const resolution = z.enum(IMAGE_RESOLUTIONS);
const quality = z.enum(["auto", "low", "medium", "high"]);

// A knob the model does not take is `{accepted: false}` with nothing else, no range (so the public catalog shows it).
const notAccepted = z.object({ accepted: z.literal(false) }).strict();
const NOT_ACCEPTED = { accepted: false } as const;

const rangeKnob = z.discriminatedUnion("accepted", [
  notAccepted,
  z.object({ accepted: z.literal(true), min: z.number(), max: z.number(), default: z.number().optional() }).strict(),
]);

const valuesKnob = z.discriminatedUnion("accepted", [
  notAccepted,
  z.object({ accepted: z.literal(true), values: z.array(z.string().min(1)).min(1), default: z.string().optional() }).strict(),
]);

const textKnob = z.discriminatedUnion("accepted", [notAccepted, z.object({ accepted: z.literal(true), maxLength: positiveInt }).strict()]);

export const imageConstraintsSchema = z
  .object({
    /** Aspect ratios it draws (a request's aspect_ratio is one of 1:1, 2:3, 3:2, 3:4, 4:3, 4:5, 5:4, 9:16, 16:9, 21:9). */
    aspectRatios: z.array(aspectRatio).default([]),
    defaultAspectRatio: aspectRatio.optional(),
    /** Formats the vendor produces itself; others are converted by the gateway. */
    formats: z.array(imageFormat).default([]),
    /** Pixel size per resolution tier and aspect ratio: what the vendor draws (nominal where it sizes by itself). */
    resolutions: z.partialRecord(resolution, z.record(aspectRatio, pixelSize)).default({}),
    defaultResolution: resolution.optional(),
    features: z
      .object({
        /** Draws a transparent background itself (png / webp). */
        transparency: z.boolean().default(false),
        /** Takes `size` (one of the pixel sizes of `resolutions`). */
        explicitSize: z.boolean().default(false),
        /** Takes output_compression itself. */
        outputCompression: z.boolean().default(false),
        /** Rewrites the prompt and reports it (revised_prompt). */
        revisedPrompt: z.boolean().default(false),
        /** An edit comes back in the edited picture's shape (image-to-image): no other aspect ratio or size. */
        editKeepsShape: z.boolean().default(false),
      })
      .strict()
      .default({ transparency: false, explicitSize: false, outputCompression: false, revisedPrompt: false, editKeepsShape: false }),
    quality: valuesKnob.default(NOT_ACCEPTED),
    /** Roles an input picture may play on edits; the default role is `reference` when listed, else the first. */
    referenceRoles: z.array(z.enum(["edit", "subject", "reference"])).default([]),
    maxReferences: nonNegativeInt.default(0),
    negativePrompt: textKnob.default(NOT_ACCEPTED),
    cfgScale: rangeKnob.default(NOT_ACCEPTED),
    stylePresets: valuesKnob.default(NOT_ACCEPTED),
    seed: rangeKnob.default(NOT_ACCEPTED),
    /** Upscale factors offered; empty: the model sizes its output itself and takes no scale. */
    upscaleFactors: z.array(positiveInt).default([]),
    /** Formats the upscale / background-removal endpoints may answer in. */
    transformFormats: z.array(imageFormat).default([]),
  })
  .strict();

/** Credits are integer micro-dollars (1 credit = $0.000001), as for chat. */
const byQuality = z.partialRecord(quality, nonNegativeInt).optional();
export const imagePricingSchema = z.union([
  z.object({ perImage: nonNegativeInt, byQuality }).strict(),
  /** A megapixel is 1,000,000 pixels. */
  z.object({ perMegapixel: nonNegativeInt, byQuality }).strict(),
]);

// freeTier after operations, as the catalog has always listed them.
const { freeTier, ...entryFields } = catalogEntryFields("an image model id is <provider>/<model>", true);

const imageModelObject = z
  .object({
    ...entryFields,
    operations: z.array(z.enum(IMAGE_OPERATIONS)).min(1),
    freeTier,
    constraints: imageConstraintsSchema.default(imageConstraintsSchema.parse({})),
    pricing: imagePricingSchema,
  })
  .strict();

export const imageModelSchema = imageModelObject.superRefine((model, context) =>
  checkImageModel(model, (path, message) => context.addIssue({ code: "custom", path, message })),
);

export const imageModelListSchema = uniqueIds(imageModelSchema, "image");

export type ImageModelInput = z.input<typeof imageModelSchema>;
export type ImageModelEntry = z.output<typeof imageModelSchema>;
export type ImageConstraints = z.output<typeof imageConstraintsSchema>;
export type ImagePricing = z.output<typeof imagePricingSchema>;
export type ImageResolution = (typeof IMAGE_RESOLUTIONS)[number];
export type ImageOperation = (typeof IMAGE_OPERATIONS)[number];

type Report = (path: Array<string | number>, message: string) => void;

/** What one entry must hold together; a broken entry is refused with the path of the bad field. */
function checkImageModel(model: z.output<typeof imageModelObject>, report: Report): void {
  const constraints = model.constraints;
  const at = (...path: Array<string | number>) => ["constraints", ...path];
  const draws = model.operations.includes("generate") || model.operations.includes("edit");
  if (draws) {
    if (constraints.formats.length === 0) report(at("formats"), "a model that draws names the formats it produces");
    if (constraints.aspectRatios.length === 0) report(at("aspectRatios"), "a model that draws names its aspect ratios");
    if (Object.keys(constraints.resolutions).length === 0) report(at("resolutions"), "a model that draws names its sizes");
  }
  if (constraints.defaultAspectRatio !== undefined && !constraints.aspectRatios.includes(constraints.defaultAspectRatio)) {
    report(at("defaultAspectRatio"), `${constraints.defaultAspectRatio} is not one of aspectRatios`);
  }
  for (const [tier, sizes] of Object.entries(constraints.resolutions)) {
    for (const ratio of Object.keys(sizes ?? {})) {
      if (!constraints.aspectRatios.includes(ratio)) report(at("resolutions", tier, ratio), `${ratio} is not one of aspectRatios`);
    }
  }
  if (constraints.defaultResolution !== undefined && !constraints.resolutions[constraints.defaultResolution]) {
    report(at("defaultResolution"), `there are no sizes for ${constraints.defaultResolution}`);
  }
  const edits = model.operations.includes("edit");
  if (edits !== constraints.referenceRoles.length > 0) report(at("referenceRoles"), "a model that edits names its roles, and only such a model");
  if (edits && constraints.maxReferences < 1) report(at("maxReferences"), "a model that edits takes at least one picture");
  const transforms = model.operations.includes("upscale") || model.operations.includes("background");
  if (transforms && constraints.transformFormats.length === 0) report(at("transformFormats"), "an upscaler or background remover names its formats");
  for (const name of ["cfgScale", "seed"] as const) {
    const knob = constraints[name];
    if (!knob.accepted) continue;
    if (knob.min > knob.max) report(at(name, "min"), "min is above max");
    if (knob.default !== undefined && (knob.default < knob.min || knob.default > knob.max)) report(at(name, "default"), "the default is out of range");
  }
  for (const name of ["quality", "stylePresets"] as const) {
    const knob = constraints[name];
    if (knob.accepted && knob.default !== undefined && !knob.values.includes(knob.default)) report(at(name, "default"), "the default is not one of the values");
  }
  const qualities = constraints.quality.accepted ? constraints.quality.values : [];
  for (const key of Object.keys(model.pricing.byQuality ?? {})) {
    if (!qualities.includes(key)) report(["pricing", "byQuality", key], `the model does not take quality ${key}`);
  }
}
