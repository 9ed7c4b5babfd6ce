// Provider type `stability`: Stability AI's image API (generate, upscale, remove background).
import { defineProvider } from "../provider.js";
import { createStabilityImages } from "./stability-images.js";

export const stabilityProvider = defineProvider({
  type: "stability",
  capabilities: ["image"],
  create(context) {
    return { name: context.name, type: "stability", images: createStabilityImages(context) };
  },
});
