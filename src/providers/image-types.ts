// The image capability: vendor-neutral requests and results for generation, editing, upscaling
// and background removal. Providers take and give bytes with their media type; validation
// against the catalog, format conversion, storage and billing are the gateway's.
//
// The contract between the gateway and a provider: the gateway asks only for what the model
// does natively (per its catalog entry) and converts afterwards; a provider refuses a value its
// vendor cannot honour with UnsupportedContentError instead of dropping it.

export type ImageOutputFormat = "png" | "jpeg" | "webp";
export type ImageBackground = "auto" | "transparent" | "opaque";
export type ImageQuality = "auto" | "low" | "medium" | "high";
export type ImageRole = "edit" | "subject" | "reference";

export interface ImageGenerateRequest {
  /** The vendor's model id (the catalog entry's `model`), not the public id. */
  model: string;
  prompt: string;
  /** Pictures wanted; a provider whose vendor draws fewer per call makes several calls. */
  n: number;
  /** The size resolved from the catalog. Vendors that size by aspect ratio read `aspectRatio`. */
  width?: number;
  height?: number;
  /** `W:H`, e.g. `16:9`. */
  aspectRatio?: string;
  quality?: ImageQuality;
  background?: ImageBackground;
  outputFormat?: ImageOutputFormat;
  /** 0-100, jpeg and webp only. */
  outputCompression?: number;
  seed?: number;
  negativePrompt?: string;
  cfgScale?: number;
  stylePreset?: string;
}

export interface ImageBytes {
  bytes: Buffer;
  /** `image/png`, `image/jpeg`, `image/webp` ... */
  mediaType: string;
}

export interface ImageInputPart extends ImageBytes {
  /** What the picture is for; `edit` only ever in first position (the gateway checks). */
  role: ImageRole;
}

export interface ImageEditRequest extends ImageGenerateRequest {
  /** In the caller's order. */
  images: ImageInputPart[];
}

/** Upscaling and background removal: one picture in, one out. */
export interface ImageTransformRequest {
  model: string;
  image: ImageBytes;
  /** Upscale factor; omitted means the vendor's own. */
  scale?: number;
  outputFormat?: ImageOutputFormat;
  /** Guidance for upscalers that take a prompt (a neutral one is used when omitted). */
  prompt?: string;
}

export interface GeneratedImage extends ImageBytes {
  /** The prompt the vendor actually drew from, when it rewrote it (dall-e-3). */
  revisedPrompt?: string;
  /** The seed the vendor used, when it reports one. */
  seed?: number;
}

export interface ImageUsage {
  inputTokens?: number;
  outputTokens?: number;
}

export interface ImageResult {
  /** Empty when the vendor declined to draw. */
  images: GeneratedImage[];
  /**
   * The vendor's reason for declining (moderation). Not an error: the gateway answers 200 with empty
   * data and this text, and bills it (docs/decisions.md §5). Set together with images when only some calls of a
   * multi-call request were declined.
   */
  refusal?: string;
  /** The vendor's request id (`x-request-id`), for X-Service-Upstream-Trace-Id. */
  upstreamRequestId?: string;
  /** Tokens, from vendors that count them (OpenAI GPT image models). */
  usage?: ImageUsage;
  /** The quality the vendor says it drew at, when it says (GPT image models answer `auto` with one). */
  quality?: string;
}

export interface ImageCallOptions {
  signal: AbortSignal;
}

/**
 * What an image vendor offers; each operation only where the vendor has it (the local engine
 * upscales but does not draw). Failures are UpstreamHttpError (body: the OpenAI-shaped error
 * envelope; vendorBody: the vendor's own), UpstreamNetworkError or UnsupportedContentError.
 */
export interface ImageCapability {
  generate?(request: ImageGenerateRequest, options: ImageCallOptions): Promise<ImageResult>;
  edit?(request: ImageEditRequest, options: ImageCallOptions): Promise<ImageResult>;
  upscale?(request: ImageTransformRequest, options: ImageCallOptions): Promise<ImageResult>;
  removeBackground?(request: ImageTransformRequest, options: ImageCallOptions): Promise<ImageResult>;
}
