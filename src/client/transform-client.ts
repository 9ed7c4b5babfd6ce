// The picture-transform endpoints for the client (upscaling, background removal), on GwClient's
// transport: both answer the image result of generations.
import type { BackgroundRemovalInput, ImageUpscaleInput } from "../gateway/images/image-transform-request.js";
import { answerShape, hasList } from "./answer-shape.js";
import type { HttpTransport } from "./http-transport.js";
import type { ImageResultBody } from "./image-types.js";

/**
 * POST /v1/image/background-removal: `image` (URL, data: URL or base64) or, alone,
 * `parent_asset_id`; output_format png or webp. The server's schema input (a type import, erased).
 */
export type BackgroundRemovalRequest = BackgroundRemovalInput;

/** POST /v1/image/upscale: the same, plus the factor. */
export type ImageUpscaleRequest = ImageUpscaleInput;

export class TransformClient {
  constructor(private readonly transport: HttpTransport) {}

  upscaleImage(body: ImageUpscaleRequest, options: { signal?: AbortSignal } = {}): Promise<ImageResultBody> {
    return this.send("/v1/image/upscale", body, options);
  }

  removeBackground(body: BackgroundRemovalRequest, options: { signal?: AbortSignal } = {}): Promise<ImageResultBody> {
    return this.send("/v1/image/background-removal", body, options);
  }

  private async send(path: string, body: BackgroundRemovalRequest | ImageUpscaleRequest, options: { signal?: AbortSignal }): Promise<ImageResultBody> {
    const result = answerShape(path, (answer): answer is ImageResultBody => hasList(answer, "data"), `unexpected answer from ${path}`);
    return this.transport.json(path, result, { ...options, json: body });
  }
}
