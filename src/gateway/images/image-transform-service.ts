// POST /v1/image/upscale and /v1/image/background-removal without HTTP: pick an allowlisted model
// (no default model: 503 provider_not_configured until an operator enables one), check the scale
// against its catalog entry (never rounded), read the picture (a URL through the SSRF-safe
// fetcher, or the caller's library picture), reserve the price (402 before any upstream call),
// run the model's provider, convert to the asked format (webp by default, as on every image
// endpoint), store the result in the caller's library with its lineage and settle one usage
// row, counted in pictures like generations.
import type { ImageModelEntry } from "../../config/image-catalog-schema.js";
import { inImageFormat, vendorReadable } from "../../media/image-encode.js";
import type { ImageInput } from "../../media/image-input.js";
import type { ImageCallOptions, ImageResult, ImageTransformRequest } from "../../providers/image-types.js";
import type { Provider } from "../../providers/provider.js";
import { usageEntry } from "../billing/usage-entry.js";
import { InvalidRequestError } from "../errors.js";
import { MAX_PICTURE_PIXELS, readPicture } from "../media/picture-input.js";
import type { ServiceContext } from "../service-context.js";
import { callToolProvider, releasingOnError, requireCredits } from "../upstream-calls/tool-provider-call.js";
import { imagePriceCredits } from "./image-catalog.js";
import { chooseImageModel } from "./image-model-choice.js";
import { type ImageCallContext, type ImageOutcome, imageOutcome } from "./image-results.js";
import type { ImageTransformBody, TransformFormat } from "./image-transform-request.js";

/** Every image endpoint answers webp unless output_format says otherwise. */
const DEFAULT_FORMAT: TransformFormat = "webp";

interface Transform {
  operation: "upscale" | "background";
  endpoint: "image.upscale" | "image.background-removal";
  /** The provider's transform, bound to it; none when it has not this one. */
  method(provider: Provider): ((request: ImageTransformRequest, options: ImageCallOptions) => Promise<ImageResult>) | undefined;
  /** Kept with the stored picture where a generation keeps its prompt. */
  describe(body: ImageTransformBody): string;
}

const UPSCALE: Transform = {
  operation: "upscale",
  endpoint: "image.upscale",
  method: (provider) => provider.images?.upscale?.bind(provider.images),
  describe: (body) => (body.scale === undefined ? "upscale" : `upscale x${body.scale}`),
};

const BACKGROUND_REMOVAL: Transform = {
  operation: "background",
  endpoint: "image.background-removal",
  method: (provider) => provider.images?.removeBackground?.bind(provider.images),
  describe: () => "background removal",
};

export class ImageTransformService {
  constructor(private readonly shared: ServiceContext) {}

  upscale(body: ImageTransformBody, context: ImageCallContext): Promise<ImageOutcome> {
    return this.transform(UPSCALE, body, context);
  }

  removeBackground(body: ImageTransformBody, context: ImageCallContext): Promise<ImageOutcome> {
    return this.transform(BACKGROUND_REMOVAL, body, context);
  }

  private async transform(transform: Transform, body: ImageTransformBody, context: ImageCallContext): Promise<ImageOutcome> {
    const started = performance.now();
    const { ledger, library } = this.shared;
    const model = chooseImageModel({ config: this.shared.config(), providers: this.shared.providers() }, transform.operation, body.model, context);
    if (transform.operation === "upscale") checkScale(model, body.scale);
    const format = body.output_format ?? DEFAULT_FORMAT;
    // The parent is checked (404) before any picture is downloaded.
    const lineage = await library.lineage(context.caller.agent.id, { projectId: body.project_id, parentAssetId: body.parent_asset_id });
    // 402 before any download when not even the smallest price can be paid.
    await requireCredits(ledger, context, imagePriceCredits(model, { n: 1, width: 1, height: 1 }));
    const input = await this.readInput(body, context);

    const request: ImageTransformRequest = { model: model.model, image: await vendorReadable(input, MAX_PICTURE_PIXELS) };
    if (body.scale !== undefined) request.scale = body.scale;
    // A format the model does not produce is asked of sharp afterwards, not of the vendor.
    if (model.constraints.transformFormats.includes(format)) request.outputFormat = format;
    const estimate = imagePriceCredits(model, { n: 1, ...outputSize(model, input, body.scale) });
    const { result, upstreamMs, reservation } = await callToolProvider(this.shared, model, context, {
      estimate,
      capability: transform.method,
      run: (method) => method(request, { signal: context.signal }),
      cut: { endpoint: transform.endpoint, units: { images: 1 } },
    });

    // Converted before billing: a picture that cannot be decoded is the vendor's fault.
    const pictures = await releasingOnError(ledger, reservation, () => Promise.all(result.images.map((image) => inImageFormat(image, format))));
    // A refusal is billed like a generation's (the picture asked for).
    const billed = result.refusal !== undefined ? Math.max(1, pictures.length) : pictures.length;
    await ledger.settle(
      reservation,
      usageEntry(context, {
        endpoint: transform.endpoint,
        model: model.id,
        provider: model.provider,
        units: { images: billed },
        credits: imagePriceCredits(model, { n: billed, ...outputSize(model, input, body.scale) }),
      }),
    );

    const stored = await library.store(context, pictures, { lineage, model: model.id, prompt: transform.describe(body) });
    return imageOutcome({ requestId: context.requestId, model: model.id, stored, result, started, upstreamMs });
  }

  /** `image` when sent (a URL, data: URL or base64), else the library picture parent_asset_id names. */
  private readInput(body: ImageTransformBody, context: ImageCallContext): Promise<ImageInput> {
    if (body.image !== undefined) return readPicture(body.image, { fetch: this.shared.fetchUrl, param: "image", signal: context.signal });
    return this.shared.library.readPicture(context.caller.agent.id, body.parent_asset_id!, "parent_asset_id");
  }
}

/** An unoffered factor is refused with the ones on offer, never rounded to a near one. */
function checkScale(model: ImageModelEntry, scale: number | undefined): void {
  if (scale === undefined) return;
  const factors = model.constraints.upscaleFactors;
  if (factors.length === 0) throw new InvalidRequestError(`${model.id} sizes its output itself and takes no 'scale'.`, { param: "scale" });
  if (!factors.includes(scale)) {
    throw new InvalidRequestError(`${model.id} upscales by ${factors.join(" or ")}; a scale of ${scale} is not offered.`, { param: "scale" });
  }
}

/**
 * The output size a per-megapixel price applies to: the input times the factor (the largest on
 * offer when none is named; the input itself for removal and self-sizing upscalers).
 */
function outputSize(model: ImageModelEntry, input: ImageInput, scale: number | undefined): { width: number; height: number } {
  const factor = scale ?? Math.max(1, ...model.constraints.upscaleFactors);
  return { width: input.width * factor, height: input.height * factor };
}
