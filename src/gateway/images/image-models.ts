// Which image models a gateway offers right now: allowlisted for the tool of one of their
// operations (`tools.image` for generate and edit, `tools.upscale`, `tools.background`; the
// default counts as allowed) and served by a configured provider that has the image capability.
// The public catalog, the styles list and the endpoints all read this.

import type { ImageModelEntry, ImageOperation } from "../../config/image-catalog-schema.js";
import { allowedModelIds, type ModelsView, providerServes } from "../models/tool-allowlist.js";
import { type PublicImageCatalog, publicImageCatalog } from "./image-catalog.js";

export type ImageModelsView = ModelsView;

export type ImageToolName = "image" | "upscale" | "background";

/** The tool (in `tools`) that allowlists models for an operation. */
export function toolOfOperation(operation: ImageOperation): ImageToolName {
  return operation === "generate" || operation === "edit" ? "image" : operation;
}

/** Its provider is configured and offers images. */
export function imageModelServed(view: ImageModelsView, model: ImageModelEntry): boolean {
  return providerServes(view, model.provider, "images");
}

/** Allowlisted for one of its operations and served, in catalog order. */
export function offeredImageModels(view: ImageModelsView): ImageModelEntry[] {
  const allowed = (model: ImageModelEntry) => model.operations.some((operation) => allowedModelIds(view.config, toolOfOperation(operation)).includes(model.id));
  return view.config.catalog.image.filter((model) => allowed(model) && imageModelServed(view, model));
}

export function offeredImageCatalog(view: ImageModelsView): PublicImageCatalog {
  const offered = new Set(offeredImageModels(view).map((model) => model.id));
  return publicImageCatalog(view.config.catalog, view.config.resolvedPlans, { include: (model) => offered.has(model.id) });
}

export interface ImageStyles {
  /** The default model's style presets (what is validated when no model is named). */
  styles: string[];
  models: Array<{ id: string; styles: string[] }>;
}

export function imageStyles(view: ImageModelsView): ImageStyles {
  const models = offeredImageModels(view).filter((model) => model.operations.includes("generate") || model.operations.includes("edit"));
  const stylesOf = (model: ImageModelEntry): string[] => (model.constraints.stylePresets.accepted ? [...model.constraints.stylePresets.values] : []);
  const defaultId = view.config.tools.image?.default ?? null;
  const fallback = models.find((model) => model.id === defaultId) ?? models[0];
  return { styles: fallback ? stylesOf(fallback) : [], models: models.map((model) => ({ id: model.id, styles: stylesOf(model) })) };
}
