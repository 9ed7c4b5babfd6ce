// The video models in the config's catalog (docs/decisions.md §8): per model, which provider
// serves it, what it takes (its public catalog `constraints`: whether a reference photo is accepted or
// required, the duration range, the resolutions and ratios offered) and its price per second of
// finished clip for each resolution. The built-in entries are in default-video-models.ts; a
// config that lists `catalog.video` replaces them as a whole.
import { z } from "zod";
import { catalogEntryFields, uniqueIds } from "./catalog-entry-fields.js";

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();
const ratio = z.string().regex(/^[1-9]\d*:[1-9]\d*$/, "a ratio is W:H");
const pixelSize = z.string().regex(/^[1-9]\d*x[1-9]\d*$/, "a size is WIDTHxHEIGHT");
const tier = z.string().regex(/^[A-Za-z0-9]+$/, "a resolution is a word such as 720p");

export const videoModelSchema = z
  .object({
    ...catalogEntryFields("a video model id is <provider>/<model>", false),
    constraints: z
      .object({
        /** none: text only; optional: a first frame may be sent; required: it must be. */
        referenceImage: z.enum(["none", "optional", "required"]),
        /** The longest prompt the vendor takes, in characters (the gateway's own cap is 4000). */
        maxPromptLength: positiveInt.optional(),
        duration: z
          .object({
            min: positiveInt,
            max: positiveInt,
            /** Only these lengths, when the vendor takes a few (Sora: 4, 8, 12). */
            values: z.array(positiveInt).min(1).optional(),
            default: positiveInt,
          })
          .strict(),
        /** Pixel size per resolution tier and ratio. */
        resolutions: z.record(tier, z.record(ratio, pixelSize)),
        defaultResolution: tier,
        defaultRatio: ratio,
      })
      .strict(),
    /** Credits (micro-dollars) per second of finished clip, per resolution tier. */
    pricing: z.object({ perSecond: z.record(tier, nonNegativeInt) }).strict(),
  })
  .strict()
  .superRefine((model, context) => {
    const { duration, resolutions, defaultResolution, defaultRatio } = model.constraints;
    const at = (...path: Array<string | number>) => ["constraints", ...path];
    const issue = (path: Array<string | number>, message: string) => context.addIssue({ code: "custom", path, message });
    if (duration.min > duration.max) issue(at("duration", "min"), "min is above max");
    for (const value of duration.values ?? [])
      if (value < duration.min || value > duration.max) issue(at("duration", "values"), `${value} is outside min..max`);
    const allowed = duration.values ?? [];
    if (duration.default < duration.min || duration.default > duration.max || (allowed.length > 0 && !allowed.includes(duration.default))) {
      issue(at("duration", "default"), "the default is not an allowed duration");
    }
    if (Object.keys(resolutions).length === 0) issue(at("resolutions"), "a model names at least one resolution");
    const sizes = Object.hasOwn(resolutions, defaultResolution) ? resolutions[defaultResolution] : undefined;
    if (!sizes) issue(at("defaultResolution"), `there are no sizes for ${defaultResolution}`);
    else if (!Object.hasOwn(sizes, defaultRatio)) issue(at("defaultRatio"), `${defaultResolution} has no size for ${defaultRatio}`);
    for (const name of Object.keys(resolutions)) if (model.pricing.perSecond[name] === undefined) issue(["pricing", "perSecond", name], `no price for ${name}`);
  });

export const videoModelListSchema = uniqueIds(videoModelSchema, "video");

export type VideoModelInput = z.input<typeof videoModelSchema>;
export type VideoModelEntry = z.output<typeof videoModelSchema>;
