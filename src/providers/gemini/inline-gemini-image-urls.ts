// Gemini takes pictures inline (or from its own Files API), never by web URL. So an `image_url` by
// http(s) URL is downloaded by the gateway through its SSRF guard (the context's fetchUrl: private
// and internal addresses refused on every hop, size and time capped), its type read from its bytes
// (never the Content-Type), and sent as a data: URL that convert-to-gemini-chat.ts inlines.
// docs/decisions.md §4.

import { isObject } from "../../json/json-values.js";
import type { UrlFetcher } from "../../net/safe-fetch.js";
import { FetchFailedError, UrlNotAllowedError } from "../../net/safe-fetch-errors.js";
import type { ChatRequest, JsonObject } from "../chat-types.js";
import { sniffImageMediaType } from "../image-bytes.js";
import { UnsupportedContentError } from "../provider-errors.js";

/** Inline data shares Gemini's 20 MB request limit: 15 MB is 20 MB as base64. */
export const GEMINI_IMAGE_URL_MAX_BYTES = 15 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 20_000;
/** What Gemini reads inline, as the bytes tell (image-bytes.ts knows these). */
const GEMINI_IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/webp"]);

/**
 * The request with every http(s) `image_url` of a user message replaced by a data: URL of its
 * bytes; the same request when there is none (or no fetcher: the converter then refuses the URL).
 */
export async function inlineGeminiImageUrls(request: ChatRequest, fetchUrl: UrlFetcher | undefined, signal: AbortSignal): Promise<ChatRequest> {
  if (!fetchUrl) return request;
  let changed = false;
  const messages = await Promise.all(
    request.messages.map(async (message, index) => {
      if (message.role !== "user" || !Array.isArray(message.content)) return message;
      const content = await Promise.all(
        message.content.map(async (part: unknown, partIndex) => {
          const url = webImageUrl(part);
          if (url === undefined || !isObject(part)) return part;
          changed = true;
          const dataUrl = await download(url, fetchUrl, `messages[${index}].content[${partIndex}]`, signal);
          return { ...part, image_url: { ...(isObject(part.image_url) ? part.image_url : {}), url: dataUrl } };
        }),
      );
      return { ...message, content } as JsonObject;
    }),
  );
  return changed ? { ...request, messages } : request;
}

function webImageUrl(part: unknown): string | undefined {
  if (!isObject(part) || part.type !== "image_url") return undefined;
  const url = isObject(part.image_url) ? part.image_url.url : part.image_url;
  return typeof url === "string" && /^https?:\/\//i.test(url.trim()) ? url.trim() : undefined;
}

async function download(url: string, fetchUrl: UrlFetcher, param: string, signal: AbortSignal): Promise<string> {
  let bytes: Buffer;
  try {
    ({ bytes } = await fetchUrl(url, { maxBytes: GEMINI_IMAGE_URL_MAX_BYTES, timeoutMs: FETCH_TIMEOUT_MS, accept: "image/*", signal }));
  } catch (error) {
    throw fetchRefusal(error, param);
  }
  const mediaType = sniffImageMediaType(bytes);
  if (!mediaType || !GEMINI_IMAGE_TYPES.has(mediaType)) {
    throw new UnsupportedContentError(
      `The picture at the URL in '${param}' is ${mediaType ?? "not a picture"}; Gemini takes PNG, JPEG or WebP.`,
      param,
      "invalid_image",
    );
  }
  return `data:${mediaType};base64,${bytes.toString("base64")}`;
}

/** As the tool endpoints answer (gateway/media/picture-input.ts): the fetcher's caps are policy, like the address checks. */
function fetchRefusal(error: unknown, param: string): unknown {
  if (error instanceof UrlNotAllowedError)
    return new UnsupportedContentError(`The URL in '${param}' is not allowed: ${error.message}.`, param, "url_not_allowed");
  if (error instanceof FetchFailedError) {
    if (error.reason === "too_large" || error.reason === "timeout" || error.reason === "too_many_redirects") {
      return new UnsupportedContentError(`The URL in '${param}' is not allowed: ${error.message}.`, param, "url_not_allowed");
    }
    return new UnsupportedContentError(`The picture in '${param}' could not be downloaded: ${error.message}.`, param, "url_fetch_failed");
  }
  return error;
}
