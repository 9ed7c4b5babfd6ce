// Convert a picture to one of the formats the gateway hands out, with sharp. The picture keeps
// its displayed orientation (EXIF rotation applied); JPEG has no alpha, so transparent pixels are
// laid on a background (white unless told otherwise) instead of turning black.

import { InvalidImageError } from "./image-error.js";
import { loadSharp } from "./sharp-loader.js";

export type OutputImageFormat = "png" | "jpeg" | "webp";

export interface EncodeImageOptions {
  format: OutputImageFormat;
  /** 1-100 for jpeg and webp; ignored for png (lossless). */
  quality?: number;
  /** Pixel limit for the input (default sharp's own, 268 megapixels). */
  maxPixels?: number;
  /** What transparent pixels become in a JPEG (CSS colour, default white). */
  background?: string;
}

export interface EncodedImage {
  bytes: Buffer;
  mediaType: `image/${OutputImageFormat}`;
  width: number;
  height: number;
}

export async function encodeImage(input: Uint8Array, options: EncodeImageOptions): Promise<EncodedImage> {
  const sharp = await loadSharp();
  let pipeline = sharp(input, { failOn: "error", limitInputPixels: options.maxPixels ?? true }).rotate();
  const quality = options.quality === undefined ? undefined : Math.min(100, Math.max(1, Math.round(options.quality)));
  switch (options.format) {
    case "png":
      pipeline = pipeline.png();
      break;
    case "jpeg":
      pipeline = pipeline.flatten({ background: options.background ?? "#ffffff" }).jpeg(quality === undefined ? {} : { quality });
      break;
    case "webp":
      pipeline = pipeline.webp(quality === undefined ? {} : { quality });
      break;
  }
  try {
    const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
    return { bytes: data, mediaType: `image/${options.format}`, width: info.width, height: info.height };
  } catch (error) {
    const message = error instanceof Error ? error.message : "";
    if (/pixel limit/i.test(message)) {
      throw new InvalidImageError("too_many_pixels", `the image has more than the ${options.maxPixels} pixels allowed`);
    }
    throw new InvalidImageError("corrupt", "the image data is corrupt or truncated");
  }
}

/** Image vendors take PNG, JPEG and WebP; a GIF goes as a PNG of its first frame, the rest as they are. */
export async function vendorReadable(picture: { bytes: Buffer; mediaType: string }, maxPixels: number): Promise<{ bytes: Buffer; mediaType: string }> {
  if (picture.mediaType !== "image/gif") return { bytes: picture.bytes, mediaType: picture.mediaType };
  const png = await encodeImage(picture.bytes, { format: "png", maxPixels });
  return { bytes: png.bytes, mediaType: png.mediaType };
}

const FORMAT_OF_MEDIA_TYPE: Record<string, OutputImageFormat> = { "image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/webp": "webp" };

/** The picture in `format`: as it is when it already is and no compression is asked, else re-encoded. */
export async function inImageFormat(
  picture: { bytes: Buffer; mediaType: string },
  format: OutputImageFormat,
  quality?: number,
): Promise<{ bytes: Buffer; mediaType: string }> {
  if (FORMAT_OF_MEDIA_TYPE[picture.mediaType.toLowerCase()] === format && quality === undefined) return { bytes: picture.bytes, mediaType: `image/${format}` };
  const encoded = await encodeImage(picture.bytes, quality === undefined ? { format } : { format, quality });
  return { bytes: encoded.bytes, mediaType: encoded.mediaType };
}
