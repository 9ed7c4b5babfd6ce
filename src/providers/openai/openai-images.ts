// Image generation and editing against OpenAI's Images API (and compatible servers): JSON for
// generations, multipart for edits, base64 answers only. Moderation blocks come back as refusals.

import { toNetworkError, type UpstreamResponse, type UpstreamTarget, upstreamRequestIdOf, upstreamTarget } from "../../net/upstream-http.js";
import { drawInBatches } from "../image-batches.js";
import type { ImageCapability, ImageResult } from "../image-types.js";
import { encodeMultipart } from "../multipart-body.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamHttpError, UpstreamNetworkError } from "../provider-errors.js";
import { convertFromOpenAIImages } from "./convert-from-openai-images.js";
import { convertToOpenAIEdit, convertToOpenAIGeneration } from "./convert-to-openai-images.js";
import { fromOpenAIHttpError, openaiImageRefusal } from "./openai-error.js";
import { openaiImageModelRules } from "./openai-image-model-rules.js";
import type { OpenAIImagesResponse } from "./openai-images-api-types.js";

export function createOpenAIImages(context: ProviderContext): ImageCapability {
  const baseUrl = (context.config.baseUrl ?? "https://api.openai.com/v1").replace(/\/+$/, "");
  const generations = upstreamTarget(`${baseUrl}/images/generations`);
  const edits = upstreamTarget(`${baseUrl}/images/edits`);
  const headers: Record<string, string> = { ...context.config.headers };
  if (context.config.apiKey) headers.authorization = `Bearer ${context.config.apiKey}`;

  async function call(target: UpstreamTarget, body: string | Buffer, contentType: string, signal: AbortSignal): Promise<ImageResult> {
    let response: UpstreamResponse;
    try {
      response = await context.http.send(
        { provider: context.name, target, headers: { ...headers, "content-type": contentType }, body, signal, answer: "images", redact: context.redact },
        context.upstream,
      );
    } catch (error) {
      if (!(error instanceof UpstreamHttpError)) throw error;
      const refusal = openaiImageRefusal(error);
      if (refusal !== undefined) return { images: [], refusal };
      throw fromOpenAIHttpError(error);
    }
    let parsed: OpenAIImagesResponse;
    try {
      parsed = JSON.parse(await response.body.text()) as OpenAIImagesResponse;
    } catch (error) {
      if (error instanceof SyntaxError) throw new UpstreamNetworkError(context.name, "invalid_response", "the body is not JSON");
      throw toNetworkError(context.name, error, signal);
    }
    return convertFromOpenAIImages(context.name, parsed ?? {}, upstreamRequestIdOf(response.headers, "x-request-id", context.redact));
  }

  return {
    async generate(request, { signal }) {
      const perCall = openaiImageModelRules(request.model).maxImagesPerCall;
      // Converted once up front so a refused value fails before any call.
      convertToOpenAIGeneration(request, 1);
      return drawInBatches(request.n, perCall, signal, (batch) =>
        call(generations, JSON.stringify(convertToOpenAIGeneration(request, batch.count)), "application/json", batch.signal),
      );
    },

    async edit(request, { signal }) {
      const perCall = openaiImageModelRules(request.model).maxImagesPerCall;
      convertToOpenAIEdit(request, 1);
      return drawInBatches(request.n, perCall, signal, (batch) => {
        const form = encodeMultipart(convertToOpenAIEdit(request, batch.count));
        return call(edits, form.body, form.contentType, batch.signal);
      });
    },
  };
}
