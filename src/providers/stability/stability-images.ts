// Image generation, editing (image-to-image), upscaling and background removal against Stability's REST v2beta: every call
// a multipart form, every answer the picture's bytes (`accept: image/*`: no base64 to inflate
// and decode again, and the finish reason and seed arrive as headers). One picture per call.

import { toNetworkError, type UpstreamResponse, upstreamTarget } from "../../net/upstream-http.js";
import { drawInBatches } from "../image-batches.js";
import type { ImageCapability, ImageResult } from "../image-types.js";
import { encodeMultipart } from "../multipart-body.js";
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
import { fromStabilityHttpError, stabilityRefusal } from "./stability-error.js";

export function createStabilityImages(context: ProviderContext): ImageCapability {
  // The API origin; a base URL ending in /v2beta works too.
  const baseUrl = (context.config.baseUrl ?? "https://api.stability.ai").replace(/\/+$/, "").replace(/\/v2beta$/, "");
  const headers: Record<string, string> = { accept: "image/*", ...context.config.headers };
  if (context.config.apiKey) headers.authorization = `Bearer ${context.config.apiKey}`;

  async function call({ path, parts }: StabilityCall, signal: AbortSignal): Promise<ImageResult> {
    const form = encodeMultipart(parts);
    const target = upstreamTarget(`${baseUrl}${path}`);
    let response: UpstreamResponse;
    try {
      response = await context.http.send(
        {
          provider: context.name,
          target,
          headers: { ...headers, "content-type": form.contentType },
          body: form.body,
          signal,
          answer: "images",
          redact: context.redact,
        },
        context.upstream,
      );
    } catch (error) {
      if (!(error instanceof UpstreamHttpError)) throw error;
      const refused = stabilityRefusal(error);
      if (refused) return refused.id ? { images: [], refusal: refused.refusal, upstreamRequestId: refused.id } : { images: [], refusal: refused.refusal };
      throw fromStabilityHttpError(error);
    }
    let body: Buffer;
    try {
      body = await response.body.bytes();
    } catch (error) {
      throw toNetworkError(context.name, error, signal);
    }
    return convertFromStabilityImage(context.name, body, response.headers);
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
