// Image generation and editing against OpenAI's Images API (and compatible servers): JSON for
// generations, multipart for edits, base64 answers only. Moderation blocks come back as refusals.

import { drawInBatches } from "../image-batches.js";
import type { ImageCapability, ImageResult } from "../image-types.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamHttpError } from "../provider-errors.js";
import { readAs } from "../upstream-schema.js";
import type { VendorCall } from "../vendor-request.js";
import { convertFromOpenAIImages } from "./convert-from-openai-images.js";
import { convertToOpenAIEdit, convertToOpenAIGeneration } from "./convert-to-openai-images.js";
import { OpenAIImagesResponse } from "./openai-api.js";
import { openaiImageRefusal } from "./openai-error.js";
import { openaiImageModelRules } from "./openai-image-model-rules.js";
import { openaiRequest } from "./openai-request.js";

export function createOpenAIImages(context: ProviderContext): ImageCapability {
  const vendor = openaiRequest(context);

  async function call(body: Pick<VendorCall, "path" | "json" | "form">, signal: AbortSignal): Promise<ImageResult> {
    let response: Awaited<ReturnType<typeof vendor.send>>;
    try {
      response = await vendor.send({ ...body, answer: "images", signal });
    } catch (error) {
      const refusal = error instanceof UpstreamHttpError ? openaiImageRefusal(error) : undefined;
      if (refusal !== undefined) return { images: [], refusal };
      throw error;
    }
    const parsed = readAs(OpenAIImagesResponse, await vendor.readJson(response, signal)) ?? {};
    return convertFromOpenAIImages(context.name, parsed, vendor.requestId(response));
  }

  return {
    async generate(request, { signal }) {
      const perCall = openaiImageModelRules(request.model).maxImagesPerCall;
      // Converted once up front so a refused value fails before any call.
      convertToOpenAIGeneration(request, 1);
      return drawInBatches(request.n, perCall, signal, (batch) =>
        call({ path: "/images/generations", json: convertToOpenAIGeneration(request, batch.count) }, batch.signal),
      );
    },

    async edit(request, { signal }) {
      const perCall = openaiImageModelRules(request.model).maxImagesPerCall;
      convertToOpenAIEdit(request, 1);
      return drawInBatches(request.n, perCall, signal, (batch) =>
        call({ path: "/images/edits", form: convertToOpenAIEdit(request, batch.count) }, batch.signal),
      );
    },
  };
}
