// Pictures a caller sends to a tool endpoint (edits, describe, upscale, background removal, OCR):
// a data: URL, bare base64, an http(s) URL the gateway downloads itself through the SSRF-safe
// fetcher, or bytes already in hand (a multipart part). Every failure becomes an error in the
// gateway envelope naming the parameter: 400 `url_not_allowed` for a private or internal address
// (docs/decisions.md §2) or a download over the size, time or redirect caps, 400 `url_fetch_failed`
// for a URL that could not be read, 415 `unsupported_media_type` for a file of a type gw does not
// take (SVG, TIFF, a PDF ...), 400 `invalid_image` for bytes that are no picture at all.

import { decodeImageInput, type ImageInput, InvalidImageError, SUPPORTED_IMAGE_NAMES } from "../../media/image-input.js";
import type { UrlFetcher } from "../../net/safe-fetch.js";
import { FetchFailedError, type FetchFailure, UrlNotAllowedError } from "../../net/safe-fetch-errors.js";
import { InvalidRequestError, UnsupportedMediaTypeError } from "../errors.js";

export type { UrlFetcher } from "../../net/safe-fetch.js";

/** A picture sent to a tool: 20 MB fits a base64 data: URL in the 25 MB JSON body limit. */
export const MAX_PICTURE_BYTES = 20 * 1024 * 1024;
/** 50 megapixels: above any vendor's input limit, far below a decompression bomb. */
export const MAX_PICTURE_PIXELS = 50_000_000;
const FETCH_TIMEOUT_MS = 20_000;
const POLICY_FAILURES: ReadonlySet<FetchFailure> = new Set(["too_large", "timeout", "too_many_redirects"]);

export interface PictureReadOptions {
  fetch: UrlFetcher;
  /** The request field the picture came in, for the error's `param`. */
  param: string;
  signal?: AbortSignal;
}

export async function readPicture(source: string | Uint8Array, options: PictureReadOptions): Promise<ImageInput> {
  // Base64 never holds a colon: anything with a scheme is a URL, and only http(s) is fetched.
  if (typeof source === "string" && /^\s*[a-z][a-z0-9+.-]*:/i.test(source) && !/^\s*(?:data|https?):/i.test(source)) {
    throw new InvalidRequestError(`The URL in '${options.param}' is not allowed: only http and https URLs can be fetched.`, {
      param: options.param,
      code: "url_not_allowed",
    });
  }
  try {
    return await decodeImageInput(source, {
      maxBytes: MAX_PICTURE_BYTES,
      maxPixels: MAX_PICTURE_PIXELS,
      fetch: (url) =>
        options.fetch(url, {
          maxBytes: MAX_PICTURE_BYTES,
          timeoutMs: FETCH_TIMEOUT_MS,
          accept: "image/*",
          ...(options.signal ? { signal: options.signal } : {}),
        }),
    });
  } catch (error) {
    throw pictureError(error, options.param);
  }
}

/** The API error for a failed picture (or other media) read; anything unexpected is rethrown as it is. */
export function pictureError(error: unknown, param: string, what = "picture"): unknown {
  if (error instanceof UrlNotAllowedError) {
    return new InvalidRequestError(`The URL in '${param}' is not allowed: ${error.message}.`, { param, code: "url_not_allowed" });
  }
  if (error instanceof FetchFailedError) {
    // The fetcher's caps (size, time, redirects) are policy, like the address checks; a host that
    // cannot be found or answers an error status is a URL that could not be read.
    if (POLICY_FAILURES.has(error.reason))
      return new InvalidRequestError(`The URL in '${param}' is not allowed: ${error.message}.`, { param, code: "url_not_allowed" });
    return new InvalidRequestError(`The ${what} in '${param}' could not be downloaded: ${error.message}.`, { param, code: "url_fetch_failed" });
  }
  if (error instanceof InvalidImageError && error.mediaType !== undefined) {
    // A recognised file of another type: the request is fine, its media type is not (415).
    return new UnsupportedMediaTypeError(`The picture in '${param}' is ${error.mediaType}, which is not supported here: send ${SUPPORTED_IMAGE_NAMES}.`, {
      param,
    });
  }
  if (error instanceof InvalidImageError) {
    return new InvalidRequestError(`The picture in '${param}' was refused: ${error.message}.`, { param, code: "invalid_image" });
  }
  return error;
}
