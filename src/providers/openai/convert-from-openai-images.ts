// OpenAI's ImagesResponse (https://platform.openai.com/docs/api-reference/images/object) -> the vendor-neutral image result.

import { sniffImageMediaType } from "../image-bytes.js";
import type { GeneratedImage, ImageResult } from "../image-types.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import type { OpenAIImagesResponse } from "./openai-api.js";

const MEDIA_TYPES: Record<string, string> = { png: "image/png", jpeg: "image/jpeg", jpg: "image/jpeg", webp: "image/webp" };

export function convertFromOpenAIImages(provider: string, body: OpenAIImagesResponse, upstreamRequestId: string | undefined): ImageResult {
  const items = body.data ?? [];
  if (items.length === 0) throw new UpstreamNetworkError(provider, "invalid_response", "the answer holds no pictures");
  // output_format is the upstream's text: own keys only.
  const format = body.output_format ?? "";
  const declared = (Object.hasOwn(MEDIA_TYPES, format) ? MEDIA_TYPES[format] : undefined) ?? "image/png";
  const images = items.map((item, index): GeneratedImage => {
    if (!item.b64_json) {
      throw new UpstreamNetworkError(provider, "invalid_response", `picture ${index + 1} came without b64_json`);
    }
    const bytes = Buffer.from(item.b64_json, "base64");
    const image: GeneratedImage = { bytes, mediaType: sniffImageMediaType(bytes) ?? declared };
    if (item.revised_prompt) image.revisedPrompt = item.revised_prompt;
    return image;
  });
  const result: ImageResult = { images };
  if (upstreamRequestId) result.upstreamRequestId = upstreamRequestId;
  if (body.quality !== undefined) result.quality = body.quality;
  const { input_tokens: inputTokens, output_tokens: outputTokens } = body.usage ?? {};
  if (inputTokens !== undefined || outputTokens !== undefined) {
    result.usage = {};
    if (inputTokens !== undefined) result.usage.inputTokens = inputTokens;
    if (outputTokens !== undefined) result.usage.outputTokens = outputTokens;
  }
  return result;
}
