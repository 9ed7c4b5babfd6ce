// local/lanczos: enlarge a picture by exactly 2 or 4 with sharp's lanczos3 kernel, on this
// machine. Plain resampling: sharper than bilinear, but it invents no detail (there is no model).
import type { ImageBytes, ImageOutputFormat } from "../image-types.js";
import { UnsupportedContentError } from "../provider-errors.js";
import { encodeLocal, localFormat, megapixels, openPicture, orientedSize, refuseOversizedWebp } from "./local-pictures.js";

export const LANCZOS_MODEL = "lanczos";
export const LANCZOS_FACTORS: readonly number[] = [2, 4];
/** The factor used when the caller names none. */
export const LANCZOS_DEFAULT_FACTOR = 2;
/** The largest picture it makes: 64 megapixels (4x of a 4 MP picture, 2x of a 16 MP one) keeps memory bounded. */
export const LANCZOS_MAX_OUTPUT_PIXELS = 64_000_000;

const ENGINE = "local/lanczos";

export async function lanczosUpscale(image: ImageBytes, options: { scale?: number; outputFormat?: ImageOutputFormat }): Promise<ImageBytes> {
  const scale = options.scale ?? LANCZOS_DEFAULT_FACTOR;
  if (!LANCZOS_FACTORS.includes(scale)) throw new UnsupportedContentError(`${ENGINE} upscales by ${LANCZOS_FACTORS.join(" or ")}; not ${scale}.`, "scale");
  const format = localFormat(options.outputFormat, ENGINE);
  const input = await orientedSize(image.bytes, LANCZOS_MAX_OUTPUT_PIXELS, ENGINE);
  const width = input.width * scale;
  const height = input.height * scale;
  if (width * height > LANCZOS_MAX_OUTPUT_PIXELS) {
    throw new UnsupportedContentError(
      `${ENGINE} makes pictures of at most ${megapixels(LANCZOS_MAX_OUTPUT_PIXELS)} megapixels; ${input.width}x${input.height} by ${scale} would be ${width}x${height}.`,
      "scale",
    );
  }
  refuseOversizedWebp(format, width, height, ENGINE);
  // fit "fill": the factor is the same on both sides, so this only pins the size to the pixel.
  return encodeLocal((await openPicture(image.bytes, LANCZOS_MAX_OUTPUT_PIXELS)).resize(width, height, { kernel: "lanczos3", fit: "fill" }), format);
}
