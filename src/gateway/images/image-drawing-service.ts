// POST /v1/image/generations and /v1/image/edits without HTTP: pick an allowlisted model, check
// the request against its catalog entry and the caller's plan caps (403, nothing billed), read
// the pictures to edit, reserve the price (402 before any upstream call), draw through the
// model's provider with retries, convert to the asked format with sharp, store each picture in
// the caller's library (a full storage still returns the picture, without asset_id) and settle
// one usage row, refusals included.
import type { ImageModelEntry } from "../../config/image-catalog-schema.js";
import { inImageFormat, vendorReadable } from "../../media/image-encode.js";
import type { ImageInput } from "../../media/image-input.js";
import type { GeneratedImage, ImageInputPart, ImageOutputFormat, ImageResult, ImageRole } from "../../providers/image-types.js";
import type { Provider } from "../../providers/provider.js";
import { headerSafe } from "../../text/control-characters.js";
import { usageEntry } from "../billing/usage-entry.js";
import type { ChatService } from "../chat/chat-service.js";
import { InvalidRequestError } from "../errors.js";
import { MAX_PICTURE_PIXELS, readPicture } from "../media/picture-input.js";
import type { ServiceContext } from "../service-context.js";
import { callToolProvider, releasingOnError, requireCredits } from "../upstream-calls/tool-provider-call.js";
import { defaultImageRole, imagePriceCredits, imageReservationCredits } from "./image-catalog.js";
import { type DrawPlan, planDrawing } from "./image-draw-plan.js";
import type { EditImageSource, ImageEditBody } from "./image-edit-request.js";
import type { Lineage, ProducedPicture } from "./image-library.js";
import { chooseImageModel } from "./image-model-choice.js";
import type { ImageGenerationBody } from "./image-request.js";
import { type ImageCallContext, type ImageOutcome, imageOutcome } from "./image-results.js";
import { enhancePrompt } from "./prompt-enhancer.js";

interface Drawing {
  model: ImageModelEntry;
  plan: DrawPlan;
  lineage: Lineage;
  /** The caller's prompt (before any enhancement), kept with each stored picture. */
  prompt: string;
  endpoint: "image.generations" | "image.edits";
  enhanced?: string;
  /** The provider's call for this drawing, with the request; none when it cannot draw it. */
  call: (provider: Provider) => (() => Promise<ImageResult>) | undefined;
}

export class ImageDrawingService {
  constructor(
    private readonly shared: ServiceContext,
    /** For enhance_prompt: the chat router, billed like any chat call. */
    private readonly chat?: ChatService,
  ) {}

  async generate(body: ImageGenerationBody, context: ImageCallContext): Promise<ImageOutcome> {
    const started = performance.now();
    const model = chooseImageModel(this.view(), "generate", body.model, context);
    const plan = planDrawing(model, body, context);
    const lineage = await this.shared.library.lineage(context.caller.agent.id, { projectId: body.project_id, parentAssetId: body.parent_asset_id });
    // After every check (an invalid request costs nothing), before the picture's reservation.
    const enhanced =
      body.enhance_prompt && this.chat
        ? await enhancePrompt(this.chat, this.shared.config(), body.prompt, { ...context, endpoint: "image.enhance" })
        : undefined;
    if (enhanced) plan.request.prompt = enhanced;
    const request = plan.request;
    const drawing: Drawing = {
      model,
      plan,
      lineage,
      prompt: body.prompt,
      endpoint: "image.generations",
      call: (provider) => {
        const generate = provider.images?.generate?.bind(provider.images);
        return generate && (() => generate(request, { signal: context.signal }));
      },
    };
    if (enhanced) drawing.enhanced = enhanced;
    return this.draw(drawing, body.quality, context, started);
  }

  async edit(body: ImageEditBody, context: ImageCallContext): Promise<ImageOutcome> {
    const started = performance.now();
    const model = chooseImageModel(this.view(), "edit", body.model, context);
    const roles = rolesFor(model, body.images);
    // Cheap checks (values, plan caps, credits) before any picture is downloaded or read.
    const preliminary = planDrawing(model, body, context);
    await requireCredits(
      this.shared.ledger,
      context,
      imageReservationCredits(model, { n: preliminary.request.n, width: preliminary.width, height: preliminary.height, quality: body.quality }),
    );
    const inputs = await this.readInputs(body.images, context);
    const plan = planDrawing(model, body, context, { inputShape: inputs[0]! });
    // An edit of a library picture joins its lineage unless the caller names another parent.
    const firstAsset = inputs.find((input) => input.assetId !== undefined)?.assetId;
    const lineage = await this.shared.library.lineage(context.caller.agent.id, {
      projectId: body.project_id,
      parentAssetId: body.parent_asset_id ?? firstAsset,
    });
    const images: ImageInputPart[] = await Promise.all(
      inputs.map(async (input, index) => ({ ...(await vendorReadable(input, MAX_PICTURE_PIXELS)), role: roles[index]! })),
    );
    const request = { ...plan.request, images };
    return this.draw(
      {
        model,
        plan,
        lineage,
        prompt: body.prompt,
        endpoint: "image.edits",
        call: (provider) => {
          const edit = provider.images?.edit?.bind(provider.images);
          return edit && (() => edit(request, { signal: context.signal }));
        },
      },
      body.quality,
      context,
      started,
    );
  }

  private async draw(drawing: Drawing, quality: string | undefined, context: ImageCallContext, started: number): Promise<ImageOutcome> {
    const { model, plan } = drawing;
    const { ledger, library } = this.shared;
    const estimate = imageReservationCredits(model, { n: plan.request.n, width: plan.width, height: plan.height, quality });
    const { result, upstreamMs, reservation } = await callToolProvider(this.shared, model, context, {
      estimate,
      capability: drawing.call,
      run: (call) => call(),
      cut: { endpoint: drawing.endpoint, units: { images: plan.request.n } },
    });

    // Converted before billing: a picture that cannot be decoded is the vendor's fault.
    const pictures = await releasingOnError(ledger, reservation, () =>
      Promise.all(result.images.map((image) => convert(image, plan.format, plan.convertCompression))),
    );

    // A refusal (200, empty data) is billed as the pictures asked for (docs/decisions.md §5).
    const billed = result.refusal !== undefined ? Math.max(plan.request.n, result.images.length) : result.images.length;
    const credits = imagePriceCredits(model, { n: billed, width: plan.width, height: plan.height, quality: result.quality ?? quality });
    await ledger.settle(
      reservation,
      usageEntry(context, {
        endpoint: drawing.endpoint,
        model: model.id,
        provider: model.provider,
        units: { images: billed, megapixels: Math.round(((billed * plan.width * plan.height) / 1_000_000) * 1000) / 1000 },
        credits,
      }),
    );

    const stored = await library.store(context, pictures, {
      lineage: drawing.lineage,
      model: model.id,
      prompt: drawing.prompt,
      revisedPrompt: plan.request.prompt,
    });
    const outcome = imageOutcome({ requestId: context.requestId, model: model.id, stored, result, started, upstreamMs });
    if (drawing.enhanced) {
      outcome.body.enhanced_prompt = drawing.enhanced;
      outcome.enhancedPromptHeader = headerSafe(drawing.enhanced);
    }
    return outcome;
  }

  /** Every picture read at once: downloads through the SSRF-safe fetcher, library assets from the caller's storage. */
  private readInputs(sources: readonly EditImageSource[], context: ImageCallContext): Promise<Array<ImageInput & { assetId?: string }>> {
    return Promise.all(
      sources.map((source) => {
        if (source.kind === "asset") return this.shared.library.readPicture(context.caller.agent.id, source.assetId, source.param);
        return readPicture(source.kind === "text" ? source.value : source.bytes, {
          fetch: this.shared.fetchUrl,
          param: source.param,
          signal: context.signal,
        });
      }),
    );
  }

  private view() {
    return { config: this.shared.config(), providers: this.shared.providers() };
  }
}

/**
 * The role of each picture: as sent, or the model's default (image-catalog.ts); a role the model
 * cannot serve is 400 image_reference_unsupported, never drawn as another; `edit` only first.
 */
function rolesFor(model: ImageModelEntry, sources: readonly EditImageSource[]): ImageRole[] {
  const offered = model.constraints.referenceRoles;
  if (sources.length > model.constraints.maxReferences) {
    throw new InvalidRequestError(
      `${model.id} takes at most ${model.constraints.maxReferences} picture${model.constraints.maxReferences === 1 ? "" : "s"} per edit; ${sources.length} were sent.`,
      { param: "images" },
    );
  }
  return sources.map((source, index) => {
    const role = source.role ?? defaultImageRole(model)!;
    const param = source.role !== undefined && source.kind !== "bytes" ? `${source.param.replace(/\.(url|asset_id)$/, "")}.role` : source.param;
    if (!offered.includes(role)) {
      throw new InvalidRequestError(
        `${model.id} cannot use a picture as ${role === "edit" ? "the picture to edit" : `a ${role}`}; its roles are ${offered.join(", ")}.`,
        { param, code: "image_reference_unsupported" },
      );
    }
    if (role === "edit" && index !== 0) throw new InvalidRequestError("Only the first picture can have the role edit.", { param });
    return role;
  });
}

async function convert(image: GeneratedImage, format: ImageOutputFormat, compression: number | undefined): Promise<ProducedPicture> {
  const picture: ProducedPicture = await inImageFormat(image, format, compression);
  if (image.revisedPrompt !== undefined) picture.revisedPrompt = image.revisedPrompt;
  return picture;
}
