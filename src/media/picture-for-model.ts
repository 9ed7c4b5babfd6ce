// A picture as a vision chat model takes it. Every vendor reads PNG and JPEG of moderate size,
// but not all take GIF (Gemini) or big files (Anthropic refuses more than 5 MB per picture and
// scales anything over ~1.5k px down anyway), so those are re-encoded: the first frame, upright,
// at most 2048 px on the long edge, PNG when it has transparency and JPEG otherwise. Anything
// already fine is sent byte for byte.

import type { ImageInput } from "./image-input.js";
import { loadSharp } from "./sharp-loader.js";

const MAX_EDGE = 2048;
const MAX_BYTES = 4 * 1024 * 1024;

export interface ModelPicture {
  bytes: Buffer;
  mediaType: "image/png" | "image/jpeg" | "image/webp";
}

export async function pictureForModel(input: ImageInput, maxPixels: number): Promise<ModelPicture> {
  const fits = input.mediaType !== "image/gif" && input.frames === 1 && Math.max(input.width, input.height) <= MAX_EDGE && input.bytes.length <= MAX_BYTES;
  if (fits) return { bytes: input.bytes, mediaType: input.mediaType as ModelPicture["mediaType"] };
  const sharp = await loadSharp();
  const pipeline = sharp(input.bytes, { failOn: "error", limitInputPixels: maxPixels })
    .rotate()
    .resize({ width: MAX_EDGE, height: MAX_EDGE, fit: "inside", withoutEnlargement: true });
  if (!input.opaque) return { bytes: await pipeline.png().toBuffer(), mediaType: "image/png" };
  return { bytes: await pipeline.jpeg({ quality: 90 }).toBuffer(), mediaType: "image/jpeg" };
}
