// The local provider's image capability: upscaling (lanczos) and flat-background removal with
// sharp on this machine. It draws and edits nothing. No network, so the signal is only checked
// before the work starts.
import type { ImageCallOptions, ImageCapability, ImageTransformRequest } from "../image-types.js";
import { UnsupportedContentError } from "../provider-errors.js";
import { FLAT_BACKGROUND_MODEL, removeFlatBackground } from "./flat-background.js";
import { LANCZOS_MODEL, lanczosUpscale } from "./lanczos-upscale.js";

export function createLocalImages(provider: string): ImageCapability {
  return {
    async upscale(request, options) {
      checkRequest(request, options, LANCZOS_MODEL, "upscaler");
      return { images: [await lanczosUpscale(request.image, { scale: request.scale, outputFormat: request.outputFormat })] };
    },

    async removeBackground(request, options) {
      checkRequest(request, options, FLAT_BACKGROUND_MODEL, "background remover");
      if (request.scale !== undefined) throw new UnsupportedContentError("Background removal takes no scale.", "scale");
      return { images: [await removeFlatBackground(request.image, { outputFormat: request.outputFormat })] };
    },
  };

  function checkRequest(request: ImageTransformRequest, options: ImageCallOptions, model: string, what: string): void {
    options.signal.throwIfAborted();
    if (request.model !== model)
      throw new UnsupportedContentError(`The local provider has no ${what} "${request.model}"; it has "${provider}/${model}".`, "model");
    if (request.prompt !== undefined) throw new UnsupportedContentError(`${provider}/${model} takes no prompt.`, "prompt");
  }
}
