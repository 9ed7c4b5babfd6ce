// Image input tokens per vendor rule (worked examples from the vendors' docs and measured edge cases
// cited in src/gateway/billing/image-tokens.ts) and picture sizes read from headers of real pictures
// made here with sharp.
import test from "ava";
import sharp from "sharp";
import {
  ANTHROPIC_MAX_IMAGE_TOKENS,
  anthropicImageTokens,
  GEMINI_3_IMAGE_TOKENS,
  GEMINI_MAX_TILED_TOKENS,
  geminiImageTokens,
  type ImageSize,
  imageTokens,
  OPENAI_MAX_PATCHES,
  OPENAI_MAX_TILES,
  openaiImageTokens,
} from "../src/gateway/billing/image-tokens.js";
import { imageDimensionsOf } from "../src/media/image-dimensions.js";

const size = (width: number, height: number): ImageSize => ({ width, height });

// ---- OpenAI tile models ----

test("openai: the guide's tile examples for gpt-4o", (t) => {
  t.is(openaiImageTokens("gpt-4o", size(1024, 1024), "high"), 765); // 768x768 -> 4 tiles
  t.is(openaiImageTokens("gpt-4o", size(2048, 4096), "high"), 1105); // 768x1536 -> 6 tiles
  t.is(openaiImageTokens("gpt-4o", size(4096, 8192), "low"), 85);
});

test("openai: auto and a missing detail are billed like high; low is the base whatever the size", (t) => {
  t.is(openaiImageTokens("gpt-4o", size(1024, 1024), "auto"), 765);
  t.is(openaiImageTokens("gpt-4o", size(1024, 1024), undefined), 765);
  t.is(openaiImageTokens("gpt-4o", size(10, 10), "high"), 85 + 170);
  t.is(openaiImageTokens("gpt-4o", undefined, "low"), 85);
});

test("openai: gpt-4o-mini bills 2833 base and 5667 per tile, date suffix or vendor prefix alike", (t) => {
  t.is(openaiImageTokens("gpt-4o-mini", size(1024, 1024), "high"), 2833 + 4 * 5667);
  t.is(openaiImageTokens("gpt-4o-mini-2024-07-18", size(1024, 1024), "high"), 25_501);
  t.is(openaiImageTokens("openai/gpt-4o-mini", size(1024, 1024), "auto"), 25_501);
  t.is(openaiImageTokens("gpt-4o-mini", size(4096, 8192), "low"), 2833);
});

test("openai: family base/tile values from the guide's table", (t) => {
  const square = size(1024, 1024); // 4 tiles
  t.is(openaiImageTokens("gpt-4.1-2025-04-14", square, "high"), 85 + 4 * 170);
  t.is(openaiImageTokens("gpt-4-turbo", square, "high"), 765);
  t.is(openaiImageTokens("openai/gpt-4o-2024-08-06", square, "high"), 765);
  t.is(openaiImageTokens("gpt-5", square, "high"), 70 + 4 * 140);
  t.is(openaiImageTokens("gpt-5-chat-latest", square, "low"), 70);
  t.is(openaiImageTokens("o1", square, "high"), 75 + 4 * 150);
  t.is(openaiImageTokens("o3-2025-04-16", size(128, 64), "high"), 75 + 150);
  t.is(openaiImageTokens("computer-use-preview", square, "high"), 65 + 4 * 129);
  t.is(openaiImageTokens("someone/brand-new-model", square, "high"), 765);
});

test("openai: scaled sides are rounded before tiling (measured 2049x513 vs 2050x513 on gpt-4.1)", (t) => {
  t.is(openaiImageTokens("gpt-4.1", size(2049, 513), "high"), 1445); // 2048x513: 4 x 2 tiles
  t.is(openaiImageTokens("gpt-4.1", size(2050, 513), "high"), 765); // 2048x512: 4 x 1 tiles
  t.is(openaiImageTokens("gpt-4.1", size(1800, 2400), "high"), 765); // 768x1024
});

test("openai: an unknown size costs the most the tile rule can give", (t) => {
  t.is(OPENAI_MAX_TILES, 8);
  t.is(openaiImageTokens("gpt-4o", undefined, "high"), 1445);
  t.is(openaiImageTokens("gpt-4o", undefined, undefined), 85 + 170 * 8);
  t.is(openaiImageTokens("gpt-4o", size(768, 2048), "high"), 1445); // the worst case is reachable
  t.is(openaiImageTokens("gpt-4o-mini", undefined, "auto"), 2833 + 5667 * 8);
  t.is(openaiImageTokens("gpt-5", undefined, "high"), 70 + 140 * 8);
  t.is(openaiImageTokens("gpt-4o", size(0, 100), "high"), 1445); // nonsense sizes are unknown
});

// ---- OpenAI patch models ----

test("openai: the guide's patch examples", (t) => {
  // 1024x1024: 32 x 32 = 1024 patches, under the 1536 budget.
  t.is(openaiImageTokens("gpt-4.1-mini", size(1024, 1024), "high"), Math.ceil(1024 * 1.62)); // 1659
  // 1800x2400: 4275 patches; scaled to 1056x1408 -> 33 x 44 = 1452 patches.
  t.is(openaiImageTokens("gpt-4.1-mini", size(1800, 2400), "high"), 2353); // 1452 x 1.62 = 2352.24
  t.is(openaiImageTokens("gpt-4.1-nano", size(1800, 2400), "high"), 3572); // 1452 x 2.46 = 3571.92
  t.is(openaiImageTokens("o4-mini-2025-04-16", size(1800, 2400), "high"), 2498); // 1452 x 1.72 = 2497.44
  t.is(openaiImageTokens("gpt-5-mini", size(1800, 2400), "high"), 2353);
  t.is(openaiImageTokens("openai/gpt-5-nano-2025-08-07", size(1800, 2400), "high"), 3572);
});

test("openai: patch models ignore detail and cap at 1536 patches", (t) => {
  t.is(openaiImageTokens("gpt-4.1-mini", size(1024, 1024), "low"), 1659);
  t.is(openaiImageTokens("gpt-4.1-mini", size(128, 64), "high"), 13); // 4 x 2 patches
  // Measured on the forum: 4000x1474 is billed the whole budget, 64 x 24 = 1536 patches.
  t.is(openaiImageTokens("gpt-4.1-mini", size(4000, 1474), "high"), Math.ceil(1536 * 1.62));
  t.is(openaiImageTokens("gpt-4.1-mini", size(1, 100_000), "high"), Math.ceil(1536 * 1.62));
  t.is(openaiImageTokens("gpt-4.1-mini", size(100_000, 1), "high"), Math.ceil(1536 * 1.62));
});

test("openai: an unknown size on a patch model is the whole patch budget", (t) => {
  t.is(OPENAI_MAX_PATCHES, 1536);
  t.is(openaiImageTokens("gpt-4.1-mini", undefined, "high"), 2489); // 2488.32
  t.is(openaiImageTokens("gpt-4.1-nano", undefined, undefined), 3779); // 3778.56
  t.is(openaiImageTokens("o4-mini", undefined, "low"), 2642); // 2641.92
});

// ---- Anthropic ----

test("anthropic: the guide's examples", (t) => {
  t.is(anthropicImageTokens(size(200, 200)), 54);
  t.is(anthropicImageTokens(size(1000, 1000)), 1334);
  t.is(anthropicImageTokens(size(1092, 1092)), 1590);
  t.is(anthropicImageTokens(size(784, 1568)), 1640); // largest size the guide says is not resized
});

test("anthropic: big pictures are scaled down to the long edge and the pixel budget", (t) => {
  t.is(anthropicImageTokens(size(4000, 3000)), 1639); // 1280x960
  t.is(anthropicImageTokens(size(3000, 4000)), 1639);
  t.is(anthropicImageTokens(size(8000, 100)), 40); // 1568x19
  t.is(anthropicImageTokens(size(1568, 1568)), 1637); // 1108x1108
});

test("anthropic: an unknown size costs the cap", (t) => {
  t.is(ANTHROPIC_MAX_IMAGE_TOKENS, 1640);
  t.is(anthropicImageTokens(undefined), 1640);
  t.is(anthropicImageTokens(size(Number.NaN, 10)), 1640);
});

// ---- Gemini ----

test("gemini: 258 up to 384x384, then 258 per 768x768 tile", (t) => {
  t.is(geminiImageTokens(size(384, 384)), 258);
  t.is(geminiImageTokens(size(100, 50)), 258);
  t.is(geminiImageTokens(size(385, 100)), 258); // one tile
  t.is(geminiImageTokens(size(768, 768)), 258);
  t.is(geminiImageTokens(size(1024, 1024)), 4 * 258);
  t.is(geminiImageTokens(size(1024, 1024), "gemini-2.5-flash"), 1032);
  t.is(geminiImageTokens(size(4000, 3000)), 12 * 258); // fitted to 3072x2304: 4 x 3 tiles
});

test("gemini: an unknown size costs a picture filling 3072x3072; Gemini 3 has a fixed budget", (t) => {
  t.is(GEMINI_MAX_TILED_TOKENS, 16 * 258);
  t.is(geminiImageTokens(undefined), 4128);
  t.is(geminiImageTokens(size(9000, 9000)), 4128);
  t.is(GEMINI_3_IMAGE_TOKENS, 1120);
  t.is(geminiImageTokens(size(100, 100), "gemini-3-pro-preview"), 1120);
  t.is(geminiImageTokens(undefined, "google/gemini-3-flash-preview"), 1120);
});

// ---- dispatch and bounds ----

test("imageTokens dispatches on the rule", (t) => {
  t.is(imageTokens("openai", "gpt-4o", size(1024, 1024), "high"), 765);
  t.is(imageTokens("openai", "gpt-4o", size(1024, 1024), "low"), 85);
  t.is(imageTokens("anthropic", "claude-sonnet-4-5", size(1000, 1000), "low"), 1334);
  t.is(imageTokens("gemini", "gemini-2.0-flash", size(1024, 1024), undefined), 1032);
  t.is(imageTokens("gemini", "gemini-3-pro-preview", size(1024, 1024), undefined), 1120);
  t.is(imageTokens("anthropic", "claude-opus-4-1", undefined, undefined), 1640);
});

test("no known size ever costs more than the unknown-size value", (t) => {
  const sides = [1, 31, 32, 33, 200, 384, 385, 511, 512, 513, 767, 768, 769, 1000, 1024, 1536, 1568, 2047, 2048, 2049, 3072, 4096, 8000];
  const models = ["gpt-4o", "gpt-4o-mini", "gpt-4.1-mini", "gpt-4.1-nano", "o4-mini", "gpt-5"];
  for (const width of sides) {
    for (const height of sides) {
      for (const model of models) {
        t.true(openaiImageTokens(model, size(width, height), "high") <= openaiImageTokens(model, undefined, "high"));
      }
      t.true(anthropicImageTokens(size(width, height)) <= anthropicImageTokens(undefined));
      t.true(geminiImageTokens(size(width, height)) <= geminiImageTokens(undefined));
    }
  }
});

// ---- image dimensions from headers ----

const solid = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: "#3366cc" } });
const dataUrl = (mediaType: string, bytes: Uint8Array): string => `data:${mediaType};base64,${Buffer.from(bytes).toString("base64")}`;

/** The byte offset of the first SOF0-2 marker of a JPEG (walking its segments). */
function sofOffset(jpeg: Buffer): number {
  let at = 2;
  while (at < jpeg.length) {
    const marker = jpeg[at + 1] ?? 0;
    if (marker >= 0xc0 && marker <= 0xc2) return at;
    at += 2 + jpeg.readUInt16BE(at + 2);
  }
  return -1;
}

/** APPn segments of `total` bytes spliced in right after SOI, the way big ICC profiles and XMP sit. */
function withBigMetadata(jpeg: Buffer, total: number): Buffer {
  const segments: Buffer[] = [];
  for (let left = total; left > 0; ) {
    const payload = Math.min(left, 65_000);
    const segment = Buffer.alloc(4 + payload, 0x20);
    segment.writeUInt16BE(0xffeb, 0); // APP11: kept by readers, meaning nothing to them
    segment.writeUInt16BE(2 + payload, 2);
    segments.push(segment);
    left -= payload;
  }
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

test("dimensions: PNG, JPEG, WebP and GIF as bytes, bare base64 and data: URLs", async (t) => {
  const pictures: Array<[string, Buffer]> = [
    ["image/png", await solid(30, 20).png().toBuffer()],
    ["image/jpeg", await solid(40, 30).jpeg().toBuffer()],
    ["image/webp", await solid(16, 12).webp().toBuffer()],
    ["image/gif", await solid(9, 7).gif().toBuffer()],
  ];
  const expected = [size(30, 20), size(40, 30), size(16, 12), size(9, 7)];
  for (const [index, [mediaType, bytes]] of pictures.entries()) {
    t.deepEqual(imageDimensionsOf(bytes), expected[index], mediaType);
    t.deepEqual(imageDimensionsOf(new Uint8Array(bytes)), expected[index], mediaType);
    t.deepEqual(imageDimensionsOf(bytes.toString("base64")), expected[index], mediaType);
    t.deepEqual(imageDimensionsOf(dataUrl(mediaType, bytes)), expected[index], mediaType);
  }
});

test("dimensions: an animated GIF is its logical screen, one frame", async (t) => {
  const frames = await Promise.all(["#ff0000", "#00ff00", "#0000ff"].map((colour) => solid(20, 15).tint(colour).png().toBuffer()));
  const gif = await sharp(frames, { join: { animated: true } })
    .gif()
    .toBuffer();
  t.is((await sharp(gif).metadata()).pages, 3);
  t.deepEqual(imageDimensionsOf(dataUrl("image/gif", gif)), size(20, 15));
});

test("dimensions: a JPEG whose SOF sits after 200 KB of metadata", async (t) => {
  const jpeg = withBigMetadata(await solid(321, 123).jpeg().toBuffer(), 200_000);
  t.true(sofOffset(jpeg) > 200_000);
  const metadata = await sharp(jpeg).metadata(); // still a valid JPEG
  t.deepEqual(size(metadata.width, metadata.height), size(321, 123));
  t.deepEqual(imageDimensionsOf(jpeg.toString("base64")), size(321, 123));
  t.deepEqual(imageDimensionsOf(dataUrl("image/jpeg", jpeg)), size(321, 123));
  t.deepEqual(imageDimensionsOf(jpeg), size(321, 123));
});

test("dimensions: EXIF orientation 6 swaps width and height", async (t) => {
  const jpeg = await solid(300, 200).jpeg().withMetadata({ orientation: 6 }).toBuffer();
  t.is((await sharp(jpeg).metadata()).orientation, 6);
  t.deepEqual(imageDimensionsOf(dataUrl("image/jpeg", jpeg)), size(200, 300));
  const upright = await solid(300, 200).jpeg().withMetadata({ orientation: 3 }).toBuffer(); // 180 degrees
  t.deepEqual(imageDimensionsOf(upright), size(300, 200));
});

test("dimensions: a ~1.2 MB photo as a data: URL", async (t) => {
  const photo = await sharp({
    create: { width: 1600, height: 1200, channels: 3, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 60 } },
  })
    .jpeg({ quality: 90 })
    .toBuffer();
  t.true(photo.length > 1_000_000 && photo.length < 1_600_000, `${photo.length} bytes`);
  t.deepEqual(imageDimensionsOf(dataUrl("image/jpeg", photo)), size(1600, 1200));
});

test("dimensions: garbage and truncated pictures are undefined, never an exception", async (t) => {
  const png = await solid(30, 20).png().toBuffer();
  const bigJpeg = withBigMetadata(await solid(50, 40).jpeg().toBuffer(), 150_000);
  const noise = Buffer.alloc(300_000);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 7919 + 13) % 251;
  const garbage: Array<string | Uint8Array> = [
    "",
    "hello world",
    "data:",
    "data:,",
    "data:image/png;base64,",
    "data:image/png;base64,!!!!not base64!!!!",
    "data:text/plain,%E0%A4%A",
    "data:text/plain,just%20text",
    "A".repeat(500_000), // base64 of zero bytes
    noise.toString("base64"),
    new Uint8Array(0),
    new Uint8Array(64),
    noise,
    png.subarray(0, 12), // cut inside the PNG signature chunk
    bigJpeg.subarray(0, 120_000), // SOF never reached
    dataUrl("image/jpeg", bigJpeg.subarray(0, 120_000)),
  ];
  for (const input of garbage) {
    t.is(imageDimensionsOf(input), undefined, typeof input === "string" ? input.slice(0, 40) : `${input.length} bytes`);
  }
});

test("dimensions: bytes viewed inside a larger buffer are read within the view", async (t) => {
  const png = await solid(30, 20).png().toBuffer();
  const backing = Buffer.concat([Buffer.alloc(100, 1), png, Buffer.alloc(100, 2)]);
  t.deepEqual(imageDimensionsOf(backing.subarray(100, 100 + png.length)), size(30, 20));
  t.deepEqual(imageDimensionsOf(new Uint8Array(backing.buffer, backing.byteOffset + 100, png.length)), size(30, 20));
});
