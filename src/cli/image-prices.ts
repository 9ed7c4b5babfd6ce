// An image model's price as `gw catalog image` shows it, in dollars from the catalog's credits
// (micro-dollars): per picture or per megapixel, and by quality where the model prices it so.
import type { ImageCatalogModel } from "../client/image-types.js";
import { usd } from "./audio-output.js";

export function imagePriceLabel(pricing: ImageCatalogModel["pricing"]): string {
  const [base, unit] = "perImage" in pricing ? [pricing.perImage, "a picture"] : [pricing.perMegapixel, "a megapixel"];
  const byQuality = Object.entries(pricing.byQuality ?? {}).map(([quality, credits]) => `${quality} ${usd(credits)}`);
  if (base === 0 && byQuality.length === 0) return "free";
  return `${usd(base)} ${unit}${byQuality.length > 0 ? ` (${byQuality.join(", ")})` : ""}`;
}
