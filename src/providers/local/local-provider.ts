// Provider type `local`: engines on this machine, no vendor key. Today the image transforms
// (sharp lanczos upscaling, flat-background removal) and speech (espeak-ng); OCR reads the
// provider's config directly.
import { defineProvider } from "../provider.js";
import { createLocalImages } from "./local-images.js";
import { createLocalSpeech } from "./local-speech.js";

export const localProvider = defineProvider({
  type: "local",
  capabilities: ["image", "speech"],
  create(context) {
    return { name: context.name, type: "local", images: createLocalImages(context.name), speech: createLocalSpeech() };
  },
});
