// Image generation, editing (image-to-image), upscaling and background removal against Stability's REST v2beta: every call
// a multipart form, every answer the picture's bytes (`accept: image/*`: no base64 to inflate
// and decode again, and the finish reason and seed arrive as headers). One picture per call.

import { drawInBatches } from "../image-batches.js";
import type { ImageCapability, ImageResult } from "../image-types.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamHttpError } from "../provider-errors.js";
import { convertFromStabilityImage } from "./convert-from-stability-images.js";
import {
  convertToStabilityBackgroundRemoval,
  convertToStabilityEdit,
  convertToStabilityGeneration,
  convertToStabilityUpscale,
  type StabilityCall,
} from "./convert-to-stability-images.js";
import { stabilityRefusal } from "./stability-error.js";
import { stabilityRequest } from "./stability-request.js";

export function createStabilityImages(context: ProviderContext): ImageCapability {
  const vendor = stabilityRequest(context);

  async function call({ path, parts }: StabilityCall, signal: AbortSignal): Promise<ImageResult> {
    let response: Awaited<ReturnType<typeof vendor.send>>;
    try {
      response = await vendor.send({ path, form: parts, answer: "images", signal });
    } catch (error) {
      const refused = error instanceof UpstreamHttpError ? stabilityRefusal(error) : undefined;
      if (!refused) throw error;
      return refused.id ? { images: [], refusal: refused.refusal, upstreamRequestId: refused.id } : { images: [], refusal: refused.refusal };
    }
    return convertFromStabilityImage(context.name, await vendor.readBytes(response, signal), response.headers);
  }

  return {
    async generate(request, { signal }) {
      // Converted once up front so a refused value fails before any call.
      convertToStabilityGeneration(request, 0);
      return drawInBatches(request.n, 1, signal, (batch) => call(convertToStabilityGeneration(request, batch.index), batch.signal));
    },

    async edit(request, { signal }) {
      convertToStabilityEdit(request, 0);
      return drawInBatches(request.n, 1, signal, (batch) => call(convertToStabilityEdit(request, batch.index), batch.signal));
    },

    async upscale(request, { signal }) {
      return call(convertToStabilityUpscale(request), signal);
    },

    async removeBackground(request, { signal }) {
      return call(convertToStabilityBackgroundRemoval(request), signal);
    },
  };
}
