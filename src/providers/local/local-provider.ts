// Provider type `local`: engines on this machine, no vendor key. Today the image transforms
// (sharp lanczos upscaling, flat-background removal) and speech (espeak-ng); OCR reads the
// provider's config directly. Video: Ken Burns clips rendered by ffmpeg.
import { defineProvider } from "../provider.js";
import { createLocalImages } from "./local-images.js";
import { createLocalSpeech } from "./local-speech.js";
import { createLocalVideo } from "./local-video.js";

// One renderer for every instance: providers are rebuilt on each config reload, and a clip being
// rendered must outlive that (a new renderer would not know the task and render it again).
let videoConcurrency = 1;
const video = createLocalVideo({ concurrency: () => videoConcurrency });

export const localProvider = defineProvider({
  type: "local",
  capabilities: ["image", "speech", "video"],
  create(context) {
    videoConcurrency = context.engines?.videoConcurrency ?? 1;
    return { name: context.name, type: "local", images: createLocalImages(context.name), speech: createLocalSpeech(), video };
  },
});
