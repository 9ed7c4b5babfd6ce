// The displayed size of a picture read from its header alone, for estimates such as the credit
// reservation of a chat request: no pixels are decoded and, for base64 input, only a prefix of the
// text is turned into bytes (64 KiB first, four times more on each retry, up to the whole input),
// so a 1.2 MB photo whose header sits near the start costs one small decode. Never throws.
import type * as ImageSize from "image-size";
import type * as ImageSizeTypes from "image-size/types/index";
import { onFirstUse } from "../load/on-first-use.js";

// Required on the first picture measured: a server whose requests carry none never loads image-size.
const imageSizeLib = onFirstUse<typeof ImageSize>("image-size");
const imageTypes = onFirstUse<typeof ImageSizeTypes>("image-size/types/index");

export interface ImageDimensions {
  width: number;
  height: number;
}

/** Bytes decoded on the first try; most headers (PNG, GIF, WebP, JPEG without huge metadata) fit. */
const FIRST_PREFIX_BYTES = 64 * 1024;
/** Growth of the prefix when the size is not in it yet (a JPEG whose SOF follows a big EXIF/ICC block). */
const PREFIX_GROWTH = 4;
/** EXIF orientations 5-8 turn the picture by 90 or 270 degrees: the displayed width is the stored height. */
const QUARTER_TURN_ORIENTATIONS = new Set([5, 6, 7, 8]);

/** The first `maxBytes` bytes of the input (fewer if it is shorter), and whether that is all of it. */
type PrefixReader = (maxBytes: number) => { bytes: Uint8Array; whole: boolean };

/**
 * Width and height of a picture as displayed (EXIF rotation applied; the logical screen of an
 * animated GIF, the canvas of an animated WebP), from raw bytes, bare base64 or a `data:` URL.
 * Undefined for anything image-size cannot read, including garbage and truncated headers.
 */
export function imageDimensionsOf(source: string | Uint8Array): ImageDimensions | undefined {
  try {
    const read = prefixReader(source);
    for (let maxBytes = FIRST_PREFIX_BYTES; ; maxBytes *= PREFIX_GROWTH) {
      const { bytes, whole } = read(maxBytes);
      const size = sizeFromHeader(bytes);
      if (size !== undefined) return size;
      // Stop when there is nothing more to read, or when the start is no picture type at all.
      if (whole || !looksLikePicture(bytes)) return undefined;
    }
  } catch {
    return undefined;
  }
}

function prefixReader(source: string | Uint8Array): PrefixReader {
  if (typeof source !== "string") {
    return (maxBytes) => ({ bytes: ownCopy(source.subarray(0, maxBytes)), whole: maxBytes >= source.length });
  }
  let base64 = source;
  if (/^data:/i.test(source.slice(0, 5))) {
    const comma = source.indexOf(",");
    if (comma < 0) return () => ({ bytes: new Uint8Array(0), whole: true });
    base64 = source.slice(comma + 1);
    if (!/;base64$/i.test(source.slice(5, comma))) {
      // A percent-encoded data: URL holds text (an SVG at best): small, read whole.
      const bytes = ownCopy(Buffer.from(decodeURIComponent(base64), "utf8"));
      return () => ({ bytes, whole: true });
    }
  }
  // Every 4 base64 characters are 3 bytes; a prefix of the text decodes to a prefix of the bytes.
  return (maxBytes) => {
    const chars = Math.ceil(maxBytes / 3) * 4;
    return { bytes: ownCopy(Buffer.from(base64.slice(0, chars), "base64")), whole: chars >= base64.length };
  };
}

/**
 * image-size reads through DataViews that run to the end of the underlying ArrayBuffer; a copy
 * with a buffer of its own keeps a short or truncated input from being read past its end (into a
 * Buffer pool or the caller's larger buffer).
 */
function ownCopy(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes);
}

function sizeFromHeader(bytes: Uint8Array): ImageDimensions | undefined {
  try {
    const { width, height, orientation } = imageSizeLib().imageSize(bytes);
    if (!isPositiveInteger(width) || !isPositiveInteger(height)) return undefined;
    return orientation !== undefined && QUARTER_TURN_ORIENTATIONS.has(orientation) ? { width: height, height: width } : { width, height };
  } catch {
    return undefined; // Not a picture, or its size lies beyond this prefix.
  }
}

function looksLikePicture(bytes: Uint8Array): boolean {
  for (const handler of imageTypes().typeHandlers.values()) {
    try {
      if (handler.validate(bytes)) return true;
    } catch {
      // A validator reading past a tiny input: not this type.
    }
  }
  return false;
}

function isPositiveInteger(value: number | undefined): value is number {
  return typeof value === "number" && Number.isInteger(value) && value > 0;
}
