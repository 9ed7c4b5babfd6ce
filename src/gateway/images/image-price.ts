// What a call costs in credits, from the catalog price: per picture, or per megapixel of each
// picture (1,000,000 pixels), at the rate of the quality drawn when the model prices by quality.
// n and size multiply the price. Rounded up to whole credits.
import type { ImageModelEntry } from "../../config/catalog-schema.js";

export interface ImagePriceRequest {
  /** Pictures produced (or asked for, when reserving before the call). */
  n: number;
  width: number;
  height: number;
  /** The quality drawn (or asked for); `auto` and unknown qualities take the base rate. */
  quality?: string;
}

export function imagePriceCredits(model: Pick<ImageModelEntry, "pricing">, request: ImagePriceRequest): number {
  const pricing = model.pricing;
  const byQuality: Record<string, number | undefined> = pricing.byQuality ?? {};
  if ("perImage" in pricing) {
    return request.n * (byQuality[request.quality ?? ""] ?? pricing.perImage);
  }
  const rate = byQuality[request.quality ?? ""] ?? pricing.perMegapixel;
  const megapixels = (request.width * request.height) / 1_000_000;
  // Round up, forgiving float noise (3.0000000004 is 3, not 4).
  return Math.max(0, Math.ceil(request.n * rate * megapixels - 1e-6));
}
