// Why a user-supplied picture was refused (400 at the API, 413 for too_large if the caller
// prefers). Messages are user-facing and name what was wrong, never a decoder's internals.

export type InvalidImageReason = "invalid_source" | "too_large" | "not_an_image" | "unsupported_type" | "too_many_pixels" | "corrupt";

export class InvalidImageError extends Error {
  readonly reason: InvalidImageReason;
  /** The type the bytes were recognised as, when they are a file of a type gw does not take (SVG, TIFF, PDF ...). */
  readonly mediaType: string | undefined;
  constructor(reason: InvalidImageReason, message: string, mediaType?: string) {
    super(message);
    this.name = "InvalidImageError";
    this.reason = reason;
    this.mediaType = mediaType;
  }
}
