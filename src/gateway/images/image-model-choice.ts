// Which catalog model serves an image call: the one asked for, else the tool's default, else the
// first one on offer. Refusals, in order: nothing on offer for the tool (503
// provider_not_configured; upscale and background removal have no default model and answer this
// until an operator enables one), not allowlisted (400 model_not_allowed), its provider gone
// (503), an operation the model does not do (400), a free plan on a paid model (403).
import type { ImageModelEntry, ImageOperation } from "../../config/image-catalog-schema.js";
import { InvalidRequestError, ModelRequiresUpgradeError, ProviderNotConfiguredError } from "../errors.js";
import { allowedModelIds } from "../models/tool-allowlist.js";
import { findImageModel } from "./image-catalog.js";
import { type ImageModelsView, imageModelServed, toolOfOperation } from "./image-models.js";
import type { ImageCallContext } from "./image-results.js";

const OPERATION_NAMES: Record<ImageOperation, string> = {
  generate: "Image generation",
  edit: "Image editing",
  upscale: "Upscaling",
  background: "Background removal",
};

const OPERATION_VERBS: Record<ImageOperation, string> = {
  generate: "draw from text",
  edit: "edit pictures",
  upscale: "upscale",
  background: "remove backgrounds",
};

export function chooseImageModel(
  view: ImageModelsView,
  operation: ImageOperation,
  requested: string | undefined,
  context: Pick<ImageCallContext, "plan" | "planName">,
): ImageModelEntry {
  const toolName = toolOfOperation(operation);
  const allowed = allowedModelIds(view.config, toolName);
  const served = allowed.filter((id) => {
    const entry = findImageModel(view.config.catalog, id);
    return entry?.operations.includes(operation) && imageModelServed(view, entry);
  });
  if (served.length === 0) {
    throw new ProviderNotConfiguredError(
      `${OPERATION_NAMES[operation]} is not configured on this gateway: no capable provider is set up and allowlisted in tools.${toolName} (gw tools enable ${toolName} MODEL).`,
    );
  }
  const id = requested ?? view.config.tools[toolName]?.default ?? served[0]!;
  if (!allowed.includes(id)) {
    throw new InvalidRequestError(`The image model \`${id}\` is not allowed here. GET /v1/public/image-models lists the models on offer.`, {
      param: "model",
      code: "model_not_allowed",
    });
  }
  const model = findImageModel(view.config.catalog, id);
  if (!model) throw new InvalidRequestError(`The image model \`${id}\` is not in the image catalog.`, { param: "model", code: "model_not_allowed" });
  if (!imageModelServed(view, model))
    throw new ProviderNotConfiguredError(`The image model \`${id}\` needs the provider \`${model.provider}\`, which is not configured.`);
  if (!model.operations.includes(operation)) {
    throw new InvalidRequestError(`The image model \`${id}\` does not ${OPERATION_VERBS[operation]} (it offers ${model.operations.join(", ")}).`, {
      param: "model",
    });
  }
  if (context.plan.freeTierOnly && !model.freeTier) throw new ModelRequiresUpgradeError(id, context.planName);
  return model;
}
