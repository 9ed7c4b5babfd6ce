// POST /v1/image/generations without HTTP: pick an allowlisted model, check the request against
// its catalog entry and the caller's plan caps (403, nothing billed), reserve the price (402
// before any upstream call), draw through the model's provider with retries, convert to the
// asked format with sharp, store each picture in the caller's storage (a full storage still
// returns the picture, without asset_id) and settle one usage row, refusals included.
import type { PlanLimits } from "../../config/config-schema.js";
import type { ImageModelEntry, ImageResolution } from "../../config/catalog-schema.js";
import { IMAGE_RESOLUTIONS } from "../../config/catalog-schema.js";
import type { Config } from "../../config/resolved-config.js";
import { encodeImage, type OutputImageFormat } from "../../media/image-encode.js";
import type { GeneratedImage, ImageGenerateRequest, ImageOutputFormat, ImageResult } from "../../providers/image-types.js";
import type { Provider } from "../../providers/provider.js";
import type { Caller } from "../auth/key-authenticator.js";
import type { CreditLedger } from "../billing/credit-ledger.js";
import { attemptInOrder } from "../chat/upstream-attempts.js";
import type { ImageAssetInfo } from "../../store/file-records.js";
import type { ProjectStore } from "../../store/project-records.js";
import { AssetNotFoundError, InvalidRequestError, ModelRequiresUpgradeError, PlanLimitExceededError, ProviderNotConfiguredError } from "../errors.js";
import { FileTooLargeError, StorageOperationsExceededError, StorageQuotaExceededError } from "../storage/storage-errors.js";
import type { StorageService } from "../storage/storage-service.js";
import { findImageModel, imagePriceCredits, resolveImageSize } from "./image-catalog.js";
import { allowedImageModelIds, imageModelServed } from "./image-models.js";
import type { ImageGenerationBody } from "./image-request.js";
import { enhancedPromptHeader, enhancePrompt } from "./prompt-enhancer.js";
import type { ChatService } from "../chat/chat-service.js";

export interface ImageServiceDependencies {
  config: () => Config;
  providers: () => ReadonlyMap<string, Provider>;
  ledger: CreditLedger;
  storage: StorageService;
  projects: ProjectStore;
  /** For enhance_prompt: the chat router, billed like any chat call. */
  chat?: ChatService;
}

export interface ImageCallContext {
  caller: Caller;
  planName: string;
  plan: PlanLimits;
  requestId: string;
  signal: AbortSignal;
}

export interface ImageResultItem {
  b64_json: string;
  media_type: string;
  revised_prompt: string;
  asset_id?: string;
}

export interface ImageResultBody {
  id: string;
  created: number;
  model: string;
  data: ImageResultItem[];
  refusal?: string;
  enhanced_prompt?: string;
  timing: { total_ms: number; upstream_ms: number };
}

export interface ImageGenerationOutcome {
  body: ImageResultBody;
  upstreamRequestId?: string;
  /** Set when some pictures could not be stored (X-Service-Asset-Warning). */
  assetWarning?: string;
  /** X-Service-Enhanced-Prompt, when enhancement produced a rewrite. */
  enhancedPromptHeader?: string;
}

const MEDIA_FORMATS: Record<string, OutputImageFormat> = { "image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/webp": "webp" };

export class ImageGenerationService {
  constructor(private readonly dependencies: ImageServiceDependencies) {}

  async generate(body: ImageGenerationBody, context: ImageCallContext): Promise<ImageGenerationOutcome> {
    const started = performance.now();
    const config = this.dependencies.config();
    const providers = this.dependencies.providers();
    const model = this.chooseModel(config, providers, body.model, context);
    const plan = this.planned(model, body, context);
    const lineage = await this.lineage(body, context);
    // After every check (an invalid request costs nothing), before the picture's reservation.
    const enhanced = body.enhance_prompt && this.dependencies.chat
      ? await enhancePrompt(this.dependencies.chat, config, body.prompt, { ...context, plan: context.plan, endpoint: "image.enhance" })
      : undefined;
    if (enhanced) plan.request.prompt = enhanced;

    const estimate = imagePriceCredits(model, { n: plan.request.n, width: plan.width, height: plan.height, quality: body.quality });
    const reservation = this.dependencies.ledger.reserve(context.caller.agent.id, context.plan.monthlyCredits, estimate);

    let result: ImageResult;
    let upstreamMs: number;
    try {
      const upstreamStarted = performance.now();
      const settings = (name: string) => ({ ...config.upstream, ...config.providers[name]?.upstream });
      const attempt = await attemptInOrder(
        {
          candidates: [{ provider: model.provider, upstreamModel: model.model, publicModel: model.id }],
          providers,
          settings,
          signal: context.signal,
          supports: (provider) => provider.images?.generate !== undefined,
        },
        ({ provider }) => provider.images!.generate!(plan.request, { signal: context.signal }),
      );
      result = attempt.result;
      upstreamMs = Math.round(performance.now() - upstreamStarted);
    } catch (error) {
      this.dependencies.ledger.release(reservation);
      throw error;
    }

    // Converted before billing: a picture that cannot be decoded is the vendor's fault, and the
    // reservation must not outlive the request either way.
    let pictures: Array<{ bytes: Buffer; mediaType: string; revisedPrompt?: string }>;
    try {
      pictures = await Promise.all(result.images.map((image) => this.convert(image, plan.format, plan.convertCompression)));
    } catch (error) {
      this.dependencies.ledger.release(reservation);
      throw error;
    }

    // A refusal is billed as the pictures asked for (spec, Image generation rule 5).
    const billed = result.refusal !== undefined ? Math.max(plan.request.n, result.images.length) : result.images.length;
    const quality = result.quality ?? body.quality;
    const credits = imagePriceCredits(model, { n: billed, width: plan.width, height: plan.height, quality });
    await this.dependencies.ledger.settle(reservation, {
      agent: context.caller.agent.id,
      keyPrefix: context.caller.key.prefix,
      endpoint: "image.generations",
      model: model.id,
      provider: model.provider,
      units: { images: billed, megapixels: Math.round(((billed * plan.width * plan.height) / 1_000_000) * 1000) / 1000 },
      credits,
      requestId: context.requestId,
    });

    const data: ImageResultItem[] = [];
    let assetWarning: string | undefined;
    for (const [index, picture] of pictures.entries()) {
      const item: ImageResultItem = { b64_json: picture.bytes.toString("base64"), media_type: picture.mediaType, revised_prompt: picture.revisedPrompt ?? plan.request.prompt };
      try {
        const stored = await this.dependencies.storage.storeBytes(context.caller.agent.id, context.plan, {
          filename: `image-${context.requestId}-${index + 1}.${MEDIA_FORMATS[picture.mediaType] ?? "bin"}`,
          contentType: picture.mediaType,
          bytes: picture.bytes,
          image: { ...lineage, model: model.id, prompt: body.prompt },
        });
        item.asset_id = stored.id;
      } catch (error) {
        if (!(error instanceof StorageQuotaExceededError || error instanceof StorageOperationsExceededError || error instanceof FileTooLargeError)) throw error;
        assetWarning = `Not saved to your library: ${error.message}`;
      }
      data.push(item);
    }

    const resultBody: ImageResultBody = {
      id: context.requestId,
      created: Math.floor(Date.now() / 1000),
      model: model.id,
      data,
      timing: { total_ms: Math.round(performance.now() - started), upstream_ms: upstreamMs },
    };
    if (result.refusal !== undefined) resultBody.refusal = result.refusal;
    if (enhanced) resultBody.enhanced_prompt = enhanced;
    const outcome: ImageGenerationOutcome = { body: resultBody };
    if (enhanced) outcome.enhancedPromptHeader = enhancedPromptHeader(enhanced);
    if (result.upstreamRequestId) outcome.upstreamRequestId = result.upstreamRequestId;
    if (assetWarning !== undefined) outcome.assetWarning = sanitizeHeader(assetWarning);
    return outcome;
  }

  /**
   * Where the pictures go in the library. A project id the caller does not own (or none) means
   * the caller's default project (spec). A parent_asset_id must name one of the caller's own
   * pictures, else 404 before anything is drawn or billed: a lineage silently dropped would be
   * worse than an error, and another agent's asset answers exactly like a missing one.
   */
  private async lineage(body: ImageGenerationBody, context: ImageCallContext): Promise<Omit<ImageAssetInfo, "model" | "prompt">> {
    const agentId = context.caller.agent.id;
    const projects = this.dependencies.projects;
    const project = (body.project_id !== undefined ? await projects.find(agentId, body.project_id) : undefined) ?? (await projects.defaultProject(agentId));
    const lineage: Omit<ImageAssetInfo, "model" | "prompt"> = { projectId: project.project_id };
    if (body.parent_asset_id !== undefined) {
      const parent = await this.dependencies.storage.findFile(agentId, body.parent_asset_id);
      if (!parent || !parent.contentType.startsWith("image/")) throw new AssetNotFoundError("parent_asset_id");
      lineage.parentAssetId = parent.id;
    }
    return lineage;
  }

  private chooseModel(config: Config, providers: ReadonlyMap<string, Provider>, requested: string | undefined, context: ImageCallContext): ImageModelEntry {
    const view = { config, providers };
    const allowed = allowedImageModelIds(config);
    const servedIds = allowed.filter((id) => {
      const entry = findImageModel(config.catalog, id);
      return entry !== undefined && imageModelServed(view, entry);
    });
    if (servedIds.length === 0) {
      throw new ProviderNotConfiguredError("Image generation is not configured on this gateway: no image provider is set up and allowlisted in tools.image.");
    }
    const id = requested ?? config.tools.image?.default ?? servedIds[0]!;
    if (!allowed.includes(id)) {
      throw new InvalidRequestError(`The image model \`${id}\` is not allowed here. GET /v1/public/image-models lists the models on offer.`, { param: "model", code: "model_not_allowed" });
    }
    const model = findImageModel(config.catalog, id);
    if (!model) throw new InvalidRequestError(`The image model \`${id}\` is not in the image catalog.`, { param: "model", code: "model_not_allowed" });
    if (!imageModelServed(view, model)) throw new ProviderNotConfiguredError(`The image model \`${id}\` needs the provider \`${model.provider}\`, which is not configured.`);
    if (!model.operations.includes("generate")) {
      throw new InvalidRequestError(`The image model \`${id}\` does not draw from text (it offers ${model.operations.join(", ")}).`, { param: "model" });
    }
    if (context.plan.freeTierOnly && !model.freeTier) throw new ModelRequiresUpgradeError(id, context.planName);
    return model;
  }

  /** Everything checked against the model and the plan, and what to ask the provider for. */
  private planned(model: ImageModelEntry, body: ImageGenerationBody, context: ImageCallContext): {
    request: ImageGenerateRequest;
    width: number;
    height: number;
    format: ImageOutputFormat;
    /** Compression the gateway applies when converting (the vendor does not, or not in this format). */
    convertCompression?: number;
  } {
    const constraints = model.constraints;
    const provider = model.provider;
    const refuse = (param: string, message: string) => new InvalidRequestError(message, { param, provider });
    const notTaken = (param: string) => refuse(param, `The provider ${provider} does not take ${param} (model ${model.id}).`);

    const n = body.n ?? 1;
    if (n > context.plan.imageMaxN) {
      throw new PlanLimitExceededError(`The ${context.planName} plan draws at most ${context.plan.imageMaxN} image${context.plan.imageMaxN === 1 ? "" : "s"} per call; n was ${n}.`, { param: "n" });
    }
    const size = resolveImageSize(model, { aspectRatio: body.aspect_ratio, resolution: body.resolution, size: body.size });
    if ("error" in size) throw new InvalidRequestError(size.error.message, { param: size.error.param });
    if (tierIndex(size.resolution) > tierIndex(context.plan.imageMaxResolution)) {
      throw new PlanLimitExceededError(`The ${context.planName} plan draws at most ${context.plan.imageMaxResolution} resolution; this request is ${size.resolution}.`, { param: body.size !== undefined ? "size" : "resolution" });
    }

    const asked = body.output_format ?? "webp";
    if (asked === "svg") throw refuse("output_format", `${model.id} draws raster pictures only; ask for png, jpeg or webp.`);
    const format: ImageOutputFormat = asked;
    const background = body.background;
    if (background === "transparent") {
      if (format !== "png" && format !== "webp") throw refuse("background", "A transparent background needs output_format png or webp.");
      if (!constraints.features.transparency) throw refuse("background", `The provider ${provider} cannot draw a transparent background (model ${model.id}).`);
    }
    if (body.output_compression !== undefined && format !== "webp" && format !== "jpeg") {
      throw refuse("output_compression", "output_compression applies to webp and jpeg only.");
    }
    // The vendor's own format when it has the asked one; else one to convert from (keeping alpha).
    const native: ImageOutputFormat = constraints.formats.includes(format)
      ? format
      : background === "transparent"
        ? (constraints.formats.find((candidate) => candidate === "png" || candidate === "webp") ?? constraints.formats[0]!)
        : (constraints.formats.find((candidate) => candidate === "png") ?? constraints.formats[0]!);

    const request: ImageGenerateRequest = { model: model.model, prompt: body.prompt, n, width: size.width, height: size.height, aspectRatio: size.aspectRatio };
    if (constraints.formats.length > 1 || native !== "png") request.outputFormat = native;
    if (background !== undefined && background !== "auto" && constraints.features.transparency) request.background = background;

    let convertCompression: number | undefined;
    if (body.output_compression !== undefined) {
      if (native === format && constraints.features.outputCompression) request.outputCompression = body.output_compression;
      else convertCompression = body.output_compression;
    }

    if (body.quality !== undefined && body.quality !== "auto") {
      if (!constraints.quality.accepted) throw notTaken("quality");
      if (!constraints.quality.values.includes(body.quality)) throw refuse("quality", `${model.id} draws at quality ${constraints.quality.values.join(", ")}; not ${body.quality}.`);
      request.quality = body.quality;
    } else if (body.quality === "auto" && constraints.quality.accepted && constraints.quality.values.includes("auto")) {
      request.quality = "auto";
    }

    if (body.negative_prompt !== undefined) {
      const knob = constraints.negativePrompt;
      if (!knob.accepted) throw notTaken("negative_prompt");
      if (body.negative_prompt.length > knob.maxLength) throw refuse("negative_prompt", `negative_prompt is at most ${knob.maxLength} characters for ${model.id}.`);
      request.negativePrompt = body.negative_prompt;
    }
    if (body.cfg_scale !== undefined) {
      const knob = constraints.cfgScale;
      if (!knob.accepted) throw notTaken("cfg_scale");
      if (body.cfg_scale < knob.min || body.cfg_scale > knob.max) throw refuse("cfg_scale", `cfg_scale is between ${knob.min} and ${knob.max} for ${model.id}.`);
      request.cfgScale = body.cfg_scale;
    }
    if (body.style_preset !== undefined) {
      const knob = constraints.stylePresets;
      if (!knob.accepted) throw notTaken("style_preset");
      if (!knob.values.includes(body.style_preset)) throw refuse("style_preset", `${model.id} takes the style presets ${knob.values.join(", ")} (GET /v1/image/styles); not ${body.style_preset}.`);
      request.stylePreset = body.style_preset;
    }
    if (body.seed !== undefined) {
      const knob = constraints.seed;
      if (!knob.accepted) throw notTaken("seed");
      if (body.seed < knob.min || body.seed > knob.max) throw refuse("seed", `seed is between ${knob.min} and ${knob.max} for ${model.id}.`);
      request.seed = body.seed;
    }
    const planned: ReturnType<ImageGenerationService["planned"]> = { request, width: size.width, height: size.height, format };
    if (convertCompression !== undefined) planned.convertCompression = convertCompression;
    return planned;
  }

  private async convert(image: GeneratedImage, format: ImageOutputFormat, compression: number | undefined): Promise<{ bytes: Buffer; mediaType: string; revisedPrompt?: string }> {
    const same = MEDIA_FORMATS[image.mediaType.toLowerCase()] === format;
    const converted = same && compression === undefined ? { bytes: image.bytes, mediaType: `image/${format}` } : await encodeImage(image.bytes, compression === undefined ? { format } : { format, quality: compression });
    const picture: { bytes: Buffer; mediaType: string; revisedPrompt?: string } = { bytes: converted.bytes, mediaType: converted.mediaType };
    if (image.revisedPrompt !== undefined) picture.revisedPrompt = image.revisedPrompt;
    return picture;
  }
}

function tierIndex(resolution: ImageResolution): number {
  return IMAGE_RESOLUTIONS.indexOf(resolution);
}

function sanitizeHeader(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, " ").slice(0, 512);
}
