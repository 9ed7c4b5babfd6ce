// What a call costs in credits, from the catalog price: per picture, or per megapixel of each
// picture (1,000,000 pixels), at the rate of the quality drawn when the model prices by quality.
// n and size multiply the price. Rounded up to whole credits. A call is reserved at the dearest
// quality the model may pick when it picks (`auto`), and billed at the one it says it drew
// (docs/decisions.md §5).
import type { ImageModelEntry } from "../../config/image-catalog-schema.js";

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

/**
 * What to reserve for a call: its price at the asked quality, or, when the model picks (quality
 * `auto`, or none asked and the model's default is auto), at the dearest quality it may pick. The
 * vendor says which it drew only in its answer, and a reservation must hold whatever it says.
 */
export function imageReservationCredits(model: Pick<ImageModelEntry, "pricing" | "constraints">, request: ImagePriceRequest): number {
  const quality = model.constraints.quality;
  if (!quality.accepted) return imagePriceCredits(model, request);
  const modelPicks = request.quality === "auto" || (request.quality === undefined && quality.default === "auto");
  if (!modelPicks) return imagePriceCredits(model, request);
  const picks = quality.values.filter((value) => value !== "auto");
  return Math.max(imagePriceCredits(model, request), ...picks.map((value) => imagePriceCredits(model, { ...request, quality: value })));
}
