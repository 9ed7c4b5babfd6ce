// Read a picture a user sent (data: URL, bare base64, http(s) URL or raw bytes) and prove it is
// one: the real type comes from the magic bytes (the declared type of a data: URL or an HTTP
// Content-Type is never trusted), the dimensions are read under a pixel limit before anything is
// decoded (a tiny file declaring 30000x30000 is refused from its header), and the whole first frame
// is then decoded so truncated and corrupt files are refused here instead of deep inside a provider.
// SVG is refused on purpose: it is a document (scripts, external references, entity expansion),
// not pixels, and no upstream we send pictures to takes it.
import type { Metadata } from "sharp";
import { type FetchedResource, safeFetch } from "../net/safe-fetch.js";
import { InvalidImageError } from "./image-error.js";
import { bytesFromBase64, bytesFromDataUrl, tooLarge } from "./image-source.js";
import { loadSharp } from "./sharp-loader.js";

export { InvalidImageError, type InvalidImageReason } from "./image-error.js";

export const IMAGE_MEDIA_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"] as const;
export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

export interface ImageInput {
  bytes: Buffer;
  /** The type sniffed from the bytes. */
  mediaType: ImageMediaType;
  /** Dimensions as displayed, after the EXIF orientation is applied; one frame of an animation. */
  width: number;
  height: number;
  /** The image has an alpha channel. */
  hasAlpha: boolean;
  /** Every pixel of the first frame is fully opaque (always true without an alpha channel). */
  opaque: boolean;
  /** Frames of an animated GIF or WebP; 1 otherwise. */
  frames: number;
}

export interface DecodeImageOptions {
  maxBytes: number;
  /** Largest width x height of one frame. */
  maxPixels: number;
  /**
   * How http(s) URLs are fetched. Defaults to safeFetch with maxBytes and timeoutMs; its
   * UrlNotAllowedError and FetchFailedError come through unchanged.
   */
  fetch?: (url: string) => Promise<FetchedResource>;
  /** Time budget of the default fetch (default 20 s). */
  timeoutMs?: number;
}

const SNIFFED_TYPES: Record<string, ImageMediaType> = {
  "image/png": "image/png",
  "image/apng": "image/png",
  "image/jpeg": "image/jpeg",
  "image/webp": "image/webp",
  "image/gif": "image/gif",
};

// What sharp calls the same formats; a mismatch means the magic bytes lie about the rest.
const SHARP_FORMATS: Record<ImageMediaType, string> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/webp": "webp",
  "image/gif": "gif",
};

/** The picture types gw takes, as messages name them. */
export const SUPPORTED_IMAGE_NAMES = "PNG, JPEG, WebP or GIF";
const SUPPORTED_NAMES = SUPPORTED_IMAGE_NAMES;
const DEFAULT_FETCH_TIMEOUT_MS = 20_000;

export async function decodeImageInput(source: string | Uint8Array, options: DecodeImageOptions): Promise<ImageInput> {
  const bytes = await bytesOf(source, options);
  return probeImage(bytes, options);
}

/** Check bytes already in hand (an upload, a stored asset) the same way. */
export async function probeImage(input: Uint8Array, options: { maxBytes: number; maxPixels: number }): Promise<ImageInput> {
  const bytes = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (bytes.length > options.maxBytes) throw tooLarge(options.maxBytes);
  if (bytes.length === 0) throw new InvalidImageError("not_an_image", "the image is empty");
  const mediaType = await sniff(bytes);
  const sharp = await loadSharp();
  const decoderOptions = { limitInputPixels: options.maxPixels, failOn: "error" } as const;
  let metadata: Metadata;
  try {
    metadata = await sharp(bytes, decoderOptions).metadata();
  } catch (error) {
    throw decoderError(error, options.maxPixels);
  }
  const width = metadata.autoOrient?.width ?? metadata.width;
  const height = metadata.autoOrient?.height ?? metadata.height;
  if (!width || !height || metadata.format !== SHARP_FORMATS[mediaType]) {
    throw new InvalidImageError("corrupt", "the image data is corrupt");
  }
  if (width * height > options.maxPixels) throw tooManyPixels(options.maxPixels);
  const hasAlpha = metadata.hasAlpha === true;
  let band: Buffer;
  try {
    // Decodes the whole first frame, the only way to know the file is not truncated, keeping one
    // byte per pixel. Not stats(): under concurrent sharp work it was seen to resolve on
    // truncated and damaged files, where a raw output fails every time.
    band = await sharp(bytes, decoderOptions)
      .extractChannel(hasAlpha ? "alpha" : 0)
      .raw({ depth: "uchar" })
      .toBuffer();
  } catch (error) {
    throw decoderError(error, options.maxPixels);
  }
  return {
    bytes,
    mediaType,
    width,
    height,
    hasAlpha,
    opaque: !hasAlpha || allOpaque(band),
    frames: metadata.pages ?? 1,
  };
}

const OPAQUE_RUN = Buffer.alloc(64 * 1024, 255);

/** Every alpha byte is 255: compared natively a run at a time (a callback per pixel cost ~50 ms of event loop for 12 MP). */
function allOpaque(alpha: Buffer): boolean {
  for (let start = 0; start < alpha.length; start += OPAQUE_RUN.length) {
    const end = Math.min(alpha.length, start + OPAQUE_RUN.length);
    if (OPAQUE_RUN.compare(alpha, start, end, 0, end - start) !== 0) return false;
  }
  return true;
}

async function bytesOf(source: string | Uint8Array, options: DecodeImageOptions): Promise<Uint8Array> {
  if (typeof source !== "string") return source;
  const text = source.trim();
  if (/^data:/i.test(text)) return bytesFromDataUrl(text, options.maxBytes);
  if (/^https?:\/\//i.test(text)) {
    const fetch =
      options.fetch ??
      ((url: string) => safeFetch(url, { maxBytes: options.maxBytes, timeoutMs: options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS, accept: "image/*" }));
    return (await fetch(text)).bytes;
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(text)) {
    throw new InvalidImageError("invalid_source", "an image must be an http(s) URL, a data: URL or base64 data");
  }
  return bytesFromBase64(text, options.maxBytes);
}

async function sniff(bytes: Buffer): Promise<ImageMediaType> {
  // file-type loads on the first sniff: a server that is never sent a picture or a sound never pays for it.
  const sniffed = await (await import("file-type")).fileTypeFromBuffer(bytes);
  const supported = sniffed ? SNIFFED_TYPES[sniffed.mime] : undefined;
  if (supported) return supported;
  // file-type names an SVG with an XML declaration application/xml and a bare one not at all.
  if (/<svg[\s>]/i.test(bytes.subarray(0, 4096).toString("latin1"))) {
    throw new InvalidImageError("unsupported_type", `SVG images are not supported; send ${SUPPORTED_NAMES}`, "image/svg+xml");
  }
  if (sniffed) {
    if (sniffed.mime.startsWith("image/")) {
      throw new InvalidImageError("unsupported_type", `${sniffed.mime} images are not supported; send ${SUPPORTED_NAMES}`, sniffed.mime);
    }
    throw new InvalidImageError("not_an_image", `the data is not an image (it looks like ${sniffed.mime}); send ${SUPPORTED_NAMES}`, sniffed.mime);
  }
  throw new InvalidImageError("not_an_image", `the data is not a recognisable image; send ${SUPPORTED_NAMES}`);
}

function decoderError(error: unknown, maxPixels: number): InvalidImageError {
  const message = error instanceof Error ? error.message : "";
  if (/pixel limit/i.test(message)) return tooManyPixels(maxPixels);
  return new InvalidImageError("corrupt", "the image data is corrupt or truncated");
}

function tooManyPixels(maxPixels: number): InvalidImageError {
  return new InvalidImageError("too_many_pixels", `the image has more than the ${maxPixels} pixels allowed`);
}
