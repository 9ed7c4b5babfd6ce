// The image catalog: its schema in the config, the built-in entries, and the pure helpers the
// image endpoints use (lookup, sizes, prices, the public catalog), with plain equality.
import test from "ava";
import { configSchema, DEFAULT_PLANS } from "../src/config/config-schema.js";
import { type ImageModelInput, imageModelSchema } from "../src/config/image-catalog-schema.js";
import {
  DEFAULT_IMAGE_MODELS,
  defaultImageRole,
  findImageModel,
  imagePriceCredits,
  publicImageCatalog,
  resolveImageSize,
} from "../src/gateway/images/image-catalog.js";

const catalog = { image: [...DEFAULT_IMAGE_MODELS] };
const model = (id: string) => findImageModel(catalog, id)!;

test("the config's catalog defaults to the built-in image models", (t) => {
  const config = configSchema.parse({});
  t.deepEqual(
    config.catalog.image.map((entry) => entry.id),
    [
      "openai/gpt-image-1",
      "openai/dall-e-3",
      "openai/dall-e-2",
      "stability/core",
      "stability/ultra",
      "stability/sd3",
      "stability/fast-upscale",
      "stability/conservative-upscale",
      "stability/remove-background",
      "local/lanczos",
      "local/flat-background",
    ],
  );
  t.deepEqual(config.catalog.image, DEFAULT_IMAGE_MODELS);
  for (const entry of DEFAULT_IMAGE_MODELS) t.is(entry.id, `${entry.provider}/${entry.model}`);
});

test("a config's own image list replaces the built-in one and is completed with defaults", (t) => {
  const config = configSchema.parse({
    catalog: {
      image: [
        {
          id: "local/lanczos",
          provider: "local",
          model: "lanczos",
          name: "Lanczos",
          operations: ["upscale"],
          constraints: { upscaleFactors: [2, 4], transformFormats: ["png", "webp"] },
          pricing: { perImage: 0 },
        },
      ],
    },
  });
  t.deepEqual(config.catalog.image, [
    {
      id: "local/lanczos",
      provider: "local",
      model: "lanczos",
      name: "Lanczos",
      operations: ["upscale"],
      freeTier: true,
      constraints: {
        aspectRatios: [],
        formats: [],
        resolutions: {},
        features: { transparency: false, explicitSize: false, outputCompression: false, revisedPrompt: false, editKeepsShape: false },
        quality: { accepted: false },
        referenceRoles: [],
        maxReferences: 0,
        negativePrompt: { accepted: false },
        cfgScale: { accepted: false },
        stylePresets: { accepted: false },
        seed: { accepted: false },
        upscaleFactors: [2, 4],
        transformFormats: ["png", "webp"],
      },
      pricing: { perImage: 0 },
    },
  ]);
});

test("broken entries are refused with the path of the bad field", (t) => {
  const base: ImageModelInput = {
    id: "openai/x",
    provider: "openai",
    model: "x",
    name: "X",
    operations: ["generate"],
    constraints: { aspectRatios: ["1:1"], formats: ["png"], resolutions: { "1K": { "1:1": "1024x1024" } } },
    pricing: { perImage: 1 },
  };
  const issues = (input: unknown) => {
    const result = configSchema.safeParse({ catalog: { image: input } });
    return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  };
  t.deepEqual(issues([base]), []);
  t.deepEqual(issues([base, base]), ['catalog.image.1.id: the image model "openai/x" is listed twice']);
  t.deepEqual(issues([{ ...base, constraints: { ...base.constraints, defaultAspectRatio: "16:9" } }]), [
    "catalog.image.0.constraints.defaultAspectRatio: 16:9 is not one of aspectRatios",
  ]);
  t.deepEqual(issues([{ ...base, constraints: { ...base.constraints, resolutions: { "2K": { "4:3": "2048x1536" } } } }]), [
    "catalog.image.0.constraints.resolutions.2K.4:3: 4:3 is not one of aspectRatios",
  ]);
  t.deepEqual(issues([{ ...base, operations: ["generate", "edit"] }]), [
    "catalog.image.0.constraints.referenceRoles: a model that edits names its roles, and only such a model",
    "catalog.image.0.constraints.maxReferences: a model that edits takes at least one picture",
  ]);
  t.deepEqual(issues([{ ...base, constraints: { ...base.constraints, cfgScale: { accepted: true, min: 1, max: 10, default: 12 } } }]), [
    "catalog.image.0.constraints.cfgScale.default: the default is out of range",
  ]);
  t.deepEqual(issues([{ ...base, pricing: { perImage: 1, byQuality: { high: 2 } } }]), [
    "catalog.image.0.pricing.byQuality.high: the model does not take quality high",
  ]);
  t.deepEqual(issues([{ ...base, id: "no-slash" }]), ["catalog.image.0.id: an image model id is <provider>/<model>"]);
  t.true(
    issues([{ ...base, constraints: { ...base.constraints, negativePrompt: { accepted: false, maxLength: 10 } } }]).length > 0,
    "a knob not accepted has no range",
  );
  t.true(issues([{ ...base, pricing: { perImage: 0.5 } }]).length > 0, "credits are integers");
  t.true(imageModelSchema.safeParse(base).success);
});

test("findImageModel and defaultImageRole", (t) => {
  t.is(findImageModel(catalog, "openai/gpt-image-1")?.model, "gpt-image-1");
  t.is(findImageModel(catalog, "openai/gpt-image-9"), undefined);
  t.is(defaultImageRole(model("openai/gpt-image-1")), "reference");
  t.is(defaultImageRole(model("stability/core")), undefined);
  const editOnly = { ...model("openai/gpt-image-1"), constraints: { ...model("openai/gpt-image-1").constraints, referenceRoles: ["edit" as const] } };
  t.is(defaultImageRole(editOnly), "edit");
});

test("resolveImageSize: defaults, aspect ratio and resolution, explicit sizes", (t) => {
  const gpt = model("openai/gpt-image-1");
  t.deepEqual(resolveImageSize(gpt, {}), { width: 1024, height: 1024, aspectRatio: "1:1", resolution: "1K" });
  t.deepEqual(resolveImageSize(gpt, { aspectRatio: "3:2", resolution: "1K" }), { width: 1536, height: 1024, aspectRatio: "3:2", resolution: "1K" });
  t.deepEqual(resolveImageSize(gpt, { size: "1024x1536", resolution: "4K" }), { width: 1024, height: 1536, aspectRatio: "2:3", resolution: "1K" });
  t.deepEqual(resolveImageSize(model("stability/sd3"), { aspectRatio: "21:9" }), { width: 1536, height: 640, aspectRatio: "21:9", resolution: "1K" });
  t.deepEqual(resolveImageSize(model("openai/dall-e-3"), { aspectRatio: "9:16" }), { width: 1024, height: 1792, aspectRatio: "9:16", resolution: "1K" });
});

test("resolveImageSize: each refusal names its parameter", (t) => {
  const gpt = model("openai/gpt-image-1");
  t.deepEqual(resolveImageSize(gpt, { aspectRatio: "16:9" }), {
    error: { param: "aspect_ratio", message: "openai/gpt-image-1 draws the aspect ratios 1:1, 3:2, 2:3; not 16:9." },
  });
  t.deepEqual(resolveImageSize(gpt, { resolution: "2K" }), { error: { param: "resolution", message: "openai/gpt-image-1 draws at 1K; not 2K." } });
  t.deepEqual(resolveImageSize(gpt, { size: "800x600" }), {
    error: { param: "size", message: "openai/gpt-image-1 draws the sizes 1024x1024, 1536x1024, 1024x1536; not 800x600." },
  });
  t.deepEqual(resolveImageSize(gpt, { size: "big" }), { error: { param: "size", message: 'size is WIDTHxHEIGHT in pixels (1024x1024); not "big".' } });
  t.deepEqual(resolveImageSize(gpt, { size: "1536x1024", aspectRatio: "1:1" }), {
    error: { param: "aspect_ratio", message: "size 1536x1024 is 3:2, which contradicts aspect_ratio 1:1." },
  });
  t.deepEqual(resolveImageSize(model("stability/core"), { size: "1024x1024" }), {
    error: { param: "size", message: "stability/core does not take an explicit size; send aspect_ratio and resolution instead." },
  });
  t.deepEqual(resolveImageSize(model("stability/fast-upscale"), {}), { error: { param: "size", message: "stability/fast-upscale does not draw pictures." } });
});

test("imagePriceCredits: per picture or per megapixel, times n, at the quality's rate, rounded up", (t) => {
  const gpt = model("openai/gpt-image-1");
  t.is(imagePriceCredits(gpt, { n: 1, width: 1024, height: 1024, quality: "high" }), 167_039);
  t.is(imagePriceCredits(gpt, { n: 1, width: 1024, height: 1024 }), 167_039);
  t.is(imagePriceCredits(gpt, { n: 4, width: 1024, height: 1024, quality: "low" }), 44_041);
  t.is(imagePriceCredits(gpt, { n: 1, width: 1536, height: 1024, quality: "medium" }), 63_072);
  const dalle = model("openai/dall-e-3");
  t.is(imagePriceCredits(dalle, { n: 1, width: 1792, height: 1024 }), 80_007);
  t.is(imagePriceCredits(dalle, { n: 1, width: 1024, height: 1024, quality: "high" }), 80_007);
  t.is(imagePriceCredits(model("stability/core"), { n: 3, width: 1024, height: 1024 }), 90_000);
  t.is(imagePriceCredits(model("stability/ultra"), { n: 1, width: 1536, height: 640, quality: "high" }), 80_000);
  t.is(imagePriceCredits({ pricing: { perMegapixel: 1_000_000 } }, { n: 1, width: 1000, height: 3000 }), 3_000_000);
});

test("publicImageCatalog: models without provider internals, plan limits per plan", (t) => {
  const body = publicImageCatalog(catalog, DEFAULT_PLANS, { include: (entry) => entry.provider === "stability" && entry.operations.includes("generate") });
  t.deepEqual(body.planLimits, {
    free: { maxImages: 1, maxResolution: "1K" },
    pro: { maxImages: 4, maxResolution: "2K" },
    max: { maxImages: 10, maxResolution: "4K" },
  });
  t.deepEqual(
    body.models.map((entry) => entry.id),
    ["stability/core", "stability/ultra", "stability/sd3"],
  );
  const sd3 = body.models[2]!;
  t.deepEqual(Object.keys(sd3).sort(), ["constraints", "description", "freeTier", "id", "name", "operations", "pricing"]);
  t.deepEqual(sd3.constraints.cfgScale, { accepted: true, min: 1, max: 10, default: 4 });
  t.deepEqual(body.models[0]!.constraints.cfgScale, { accepted: false });
  t.deepEqual(sd3.pricing, { perImage: 65_000 });
  t.is(publicImageCatalog(catalog, {}).models.length, catalog.image.length);
  t.false(JSON.stringify(publicImageCatalog(catalog, {})).includes('"provider"'));
});
