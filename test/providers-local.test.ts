// The `local` provider's image engines on real pixels: lanczos upscaling (exact sizes, the
// displayed orientation, real resampling, refusals) and flat-background removal (transparent
// background, an opaque subject that keeps its enclosed background-coloured parts, soft edges,
// and a refusal when the border is not one colour).

import test from "ava";
import sharp from "sharp";
import { upstreamSchema } from "../src/config/config-schema.js";
import { UpstreamHttp } from "../src/net/upstream-http.js";
import type { ImageBytes, ImageCapability } from "../src/providers/image-types.js";
import { UnsupportedContentError } from "../src/providers/provider-errors.js";
import { providerTypes } from "../src/providers/registry.js";
import { providerHooks } from "./helpers/provider-hooks.js";

const http = new UpstreamHttp();
test.after.always(() => http.close());

function localImages(): ImageCapability {
  const provider = providerTypes.get("local")!.create({ name: "local", config: { type: "local" }, upstream: upstreamSchema.parse({}), http, ...providerHooks });
  return provider.images!;
}

const options = () => ({ signal: new AbortController().signal });

async function png(width: number, height: number, colour = "#3366cc"): Promise<ImageBytes> {
  return {
    bytes: await sharp({ create: { width, height, channels: 3, background: colour } })
      .png()
      .toBuffer(),
    mediaType: "image/png",
  };
}

/** A red disc with a white dot in its middle, on white: a flat background around a subject that encloses background colour. */
export async function discOnWhite(width = 300, height = 200): Promise<ImageBytes> {
  const r = Math.min(width, height) / 3;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#ffffff"/><circle cx="${width / 2}" cy="${height / 2}" r="${r}" fill="#c03030"/><circle cx="${width / 2}" cy="${height / 2}" r="${r / 4}" fill="#ffffff"/></svg>`;
  return { bytes: await sharp(Buffer.from(svg)).png().toBuffer(), mediaType: "image/png" };
}

async function rgba(bytes: Buffer): Promise<{ alpha: (x: number, y: number) => number; width: number; height: number; channels: number }> {
  const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { alpha: (x, y) => data[(y * info.width + x) * 4 + 3]!, width: info.width, height: info.height, channels: (await sharp(bytes).metadata()).channels! };
}

test("the local provider type is registered with upscale and background removal only", (t) => {
  const images = localImages();
  t.truthy(images.upscale);
  t.truthy(images.removeBackground);
  t.is(images.generate, undefined);
  t.is(images.edit, undefined);
});

test("lanczos upscales a non-square picture by exactly 2 and 4, in the format asked", async (t) => {
  const images = localImages();
  const input = await png(30, 20);
  for (const [scale, format] of [
    [2, "png"],
    [4, "webp"],
  ] as const) {
    const result = await images.upscale!({ model: "lanczos", image: input, scale, outputFormat: format }, options());
    t.is(result.images.length, 1);
    t.is(result.images[0]!.mediaType, `image/${format}`);
    const meta = await sharp(result.images[0]!.bytes).metadata();
    t.is(meta.format, format);
    t.is(meta.width, 30 * scale);
    t.is(meta.height, 20 * scale);
  }
  // No scale: the engine's own, 2; no format: png.
  const plain = await images.upscale!({ model: "lanczos", image: input }, options());
  const meta = await sharp(plain.images[0]!.bytes).metadata();
  t.deepEqual([meta.format, meta.width, meta.height], ["png", 60, 40]);
});

test("lanczos sizes by the displayed orientation (EXIF rotation applied)", async (t) => {
  const rotated = await sharp({ create: { width: 40, height: 20, channels: 3, background: "#abcdef" } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .toBuffer();
  const result = await localImages().upscale!(
    { model: "lanczos", image: { bytes: rotated, mediaType: "image/jpeg" }, scale: 2, outputFormat: "png" },
    options(),
  );
  const meta = await sharp(result.images[0]!.bytes).metadata();
  t.deepEqual([meta.width, meta.height], [40, 80]);
  t.true(meta.orientation === undefined || meta.orientation === 1);
});

test("lanczos resamples: a hard black and white edge gets intermediate values, unlike nearest neighbour", async (t) => {
  const stripes = await sharp(Buffer.from([0, 0, 0, 255, 255, 255, 0, 0, 0, 255, 255, 255, 0, 0, 0, 255, 255, 255]), {
    raw: { width: 6, height: 1, channels: 3 },
  })
    .png()
    .toBuffer();
  const result = await localImages().upscale!(
    { model: "lanczos", image: { bytes: stripes, mediaType: "image/png" }, scale: 4, outputFormat: "png" },
    options(),
  );
  const { data } = await sharp(result.images[0]!.bytes).raw().toBuffer({ resolveWithObject: true });
  const levels = new Set(data);
  t.true(levels.size > 4, `levels: ${[...levels].join(",")}`);
});

test("lanczos refuses factors it does not offer, jpeg, and outputs beyond its limits", async (t) => {
  const images = localImages();
  const input = await png(30, 20);
  const three = await t.throwsAsync(images.upscale!({ model: "lanczos", image: input, scale: 3 }, options()), { instanceOf: UnsupportedContentError });
  t.is(three.param, "scale");
  t.regex(three.message, /2 or 4/);
  const jpeg = await t.throwsAsync(images.upscale!({ model: "lanczos", image: input, scale: 2, outputFormat: "jpeg" }, options()), {
    instanceOf: UnsupportedContentError,
  });
  t.is(jpeg.param, "output_format");
  const model = await t.throwsAsync(images.upscale!({ model: "bicubic", image: input }, options()), { instanceOf: UnsupportedContentError });
  t.is(model.param, "model");

  // 4500 x 4000 is 18 MP: by 2 it would be 72 MP, over the 64 MP the engine makes.
  const large = await png(4500, 4000);
  const tooMany = await t.throwsAsync(images.upscale!({ model: "lanczos", image: large, scale: 2, outputFormat: "png" }, options()), {
    instanceOf: UnsupportedContentError,
  });
  t.is(tooMany.param, "scale");
  t.regex(tooMany.message, /64 megapixels/);
  // webp holds at most 16383 pixels a side.
  const wide = await png(9000, 100);
  const webp = await t.throwsAsync(images.upscale!({ model: "lanczos", image: wide, scale: 2, outputFormat: "webp" }, options()), {
    instanceOf: UnsupportedContentError,
  });
  t.is(webp.param, "output_format");
});

test("flat-background clears a white background: transparent corners, an opaque subject, its white middle kept, soft edges", async (t) => {
  const images = localImages();
  for (const format of ["png", "webp"] as const) {
    const result = await images.removeBackground!({ model: "flat-background", image: await discOnWhite(), outputFormat: format }, options());
    t.is(result.images[0]!.mediaType, `image/${format}`);
    const meta = await sharp(result.images[0]!.bytes).metadata();
    t.is(meta.format, format);
    t.true(meta.hasAlpha);
    t.deepEqual([meta.width, meta.height], [300, 200]);
    const { alpha } = await rgba(result.images[0]!.bytes);
    for (const [x, y] of [
      [0, 0],
      [299, 0],
      [0, 199],
      [299, 199],
      [20, 100],
    ] as const)
      t.is(alpha(x, y), 0, `background at ${x},${y}`);
    // The disc (radius 66) and the white dot inside it (radius 16), which the border cannot reach.
    t.is(alpha(150, 100 - 40), 255);
    t.is(alpha(150 + 40, 100), 255);
    t.is(alpha(150, 100), 255, "the enclosed white dot is not holed");
    if (format === "png") {
      const edge = Array.from({ length: 12 }, (_, index) => alpha(150 + 60 + index, 100));
      t.true(
        edge.some((value) => value > 0 && value < 255),
        `anti-aliased edge: ${edge.join(",")}`,
      );
    }
  }
});

test("flat-background un-mixes edge colours (no white halo) and works on a noisy JPEG background", async (t) => {
  const jpeg = await sharp((await discOnWhite(400, 300)).bytes)
    .jpeg({ quality: 70 })
    .toBuffer();
  const result = await localImages().removeBackground!(
    { model: "flat-background", image: { bytes: jpeg, mediaType: "image/jpeg" }, outputFormat: "png" },
    options(),
  );
  const { data, info } = await sharp(result.images[0]!.bytes).raw().toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number) => Array.from(data.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 4));
  t.is(at(2, 2)[3], 0);
  t.is(at(200, 150 - 70)[3], 255);
  // Partly transparent edge pixels keep the disc's red, not a pink mix with the white.
  let soft = 0;
  for (let x = 200 + 95; x < 200 + 105; x++) {
    const [red, green, , alpha] = at(x, 150) as [number, number, number, number];
    if (alpha === 0 || alpha === 255) continue;
    soft += 1;
    if (alpha > 30) t.true(red - green > 80, `edge pixel ${x}: ${at(x, 150).join(",")}`);
  }
  t.true(soft > 0);
});

test("flat-background refuses a picture whose border is not one colour, and takes no scale", async (t) => {
  const images = localImages();
  const noise = await sharp(Buffer.from(Array.from({ length: 64 * 48 * 3 }, (_, index) => (index * 7919) % 251)), {
    raw: { width: 64, height: 48, channels: 3 },
  })
    .png()
    .toBuffer();
  const refused = await t.throwsAsync(images.removeBackground!({ model: "flat-background", image: { bytes: noise, mediaType: "image/png" } }, options()), {
    instanceOf: UnsupportedContentError,
  });
  t.is(refused.param, "image");
  t.regex(refused.message, /flat/);
  const scaled = await t.throwsAsync(images.removeBackground!({ model: "flat-background", image: await png(20, 20), scale: 2 }, options()), {
    instanceOf: UnsupportedContentError,
  });
  t.is(scaled.param, "scale");
});

test("flat-background clears large pictures on a worker thread with the same result, refusals included", async (t) => {
  // 1600 x 1000 is over the inline limit: the pass runs on a worker over shared memory.
  const result = await localImages().removeBackground!({ model: "flat-background", image: await discOnWhite(1600, 1000), outputFormat: "png" }, options());
  const { alpha, width, height } = await rgba(result.images[0]!.bytes);
  t.deepEqual([width, height], [1600, 1000]);
  for (const [x, y] of [
    [0, 0],
    [1599, 999],
    [100, 500],
  ] as const)
    t.is(alpha(x, y), 0, `background at ${x},${y}`);
  t.is(alpha(800, 500 - 250), 255);
  t.is(alpha(800, 500), 255, "the enclosed white dot is not holed");
  const noisy = Buffer.from(Array.from({ length: 1200 * 1000 * 3 }, (_, index) => (index * 7919) % 251));
  const bytes = await sharp(noisy, { raw: { width: 1200, height: 1000, channels: 3 } })
    .png()
    .toBuffer();
  await t.throwsAsync(localImages().removeBackground!({ model: "flat-background", image: { bytes, mediaType: "image/png" } }, options()), {
    instanceOf: UnsupportedContentError,
    message: /flat/,
  });
});

test("flat-background leaves a picture whose border is already transparent as it is", async (t) => {
  const cutout = await sharp({ create: { width: 40, height: 40, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([{ input: { create: { width: 20, height: 20, channels: 4, background: "#ff8800" } }, left: 10, top: 10 }])
    .png()
    .toBuffer();
  const result = await localImages().removeBackground!({ model: "flat-background", image: { bytes: cutout, mediaType: "image/png" } }, options());
  const { alpha } = await rgba(result.images[0]!.bytes);
  t.is(alpha(0, 0), 0);
  t.is(alpha(20, 20), 255);
  t.is(alpha(10, 10), 255);
});
