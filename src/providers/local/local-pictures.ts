// What the local image engines share: opening a picture with sharp (displayed orientation, a
// pixel limit) and encoding the result as png or webp, the formats their catalog entries offer.
import type { Sharp } from "sharp";
import { loadSharp } from "../../media/sharp-loader.js";
import type { ImageBytes, ImageOutputFormat } from "../image-types.js";
import { UnsupportedContentError } from "../provider-errors.js";

export type LocalOutputFormat = "png" | "webp";

/** WebP stores each side in 14 bits. */
export const WEBP_MAX_SIDE = 16_383;

/** The picture as displayed (EXIF orientation applied), first frame only. */
export async function openPicture(bytes: Buffer, maxPixels: number): Promise<Sharp> {
  const sharp = await loadSharp();
  return sharp(bytes, { autoOrient: true, failOn: "error", limitInputPixels: maxPixels });
}

/** Raw RGBA pixels as a picture to encode. */
export async function rawPicture(pixels: Uint8Array, width: number, height: number): Promise<Sharp> {
  const sharp = await loadSharp();
  return sharp(pixels, { raw: { width, height, channels: 4 } });
}

/** Its displayed size, read from the header. */
export async function orientedSize(bytes: Buffer, maxPixels: number, engine: string): Promise<{ width: number; height: number }> {
  try {
    const metadata = await (await openPicture(bytes, maxPixels)).metadata();
    const width = metadata.autoOrient?.width ?? metadata.width;
    const height = metadata.autoOrient?.height ?? metadata.height;
    if (width && height) return { width, height };
  } catch (error) {
    if (/pixel limit/i.test(error instanceof Error ? error.message : "")) {
      throw new UnsupportedContentError(`${engine} takes pictures of at most ${megapixels(maxPixels)} megapixels.`, "image");
    }
  }
  throw new UnsupportedContentError(`${engine} could not read the picture.`, "image");
}

/** png unless asked otherwise; jpeg is not offered (no alpha, and the catalog says png or webp). */
export function localFormat(format: ImageOutputFormat | undefined, engine: string): LocalOutputFormat {
  if (format === undefined || format === "png" || format === "webp") return format ?? "png";
  throw new UnsupportedContentError(`${engine} answers png or webp; not ${format}.`, "output_format");
}

export function refuseOversizedWebp(format: LocalOutputFormat, width: number, height: number, engine: string): void {
  if (format === "webp" && Math.max(width, height) > WEBP_MAX_SIDE) {
    throw new UnsupportedContentError(
      `${engine} would produce ${width}x${height} pixels, more than the ${WEBP_MAX_SIDE} pixels a side webp holds; ask for png.`,
      "output_format",
    );
  }
}

export async function encodeLocal(pipeline: Sharp, format: LocalOutputFormat): Promise<ImageBytes> {
  const bytes = await (format === "png" ? pipeline.png() : pipeline.webp()).toBuffer();
  return { bytes, mediaType: `image/${format}` };
}

export function megapixels(pixels: number): string {
  return String(Math.round(pixels / 100_000) / 10);
}
