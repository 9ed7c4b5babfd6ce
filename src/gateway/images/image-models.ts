// Which image models a gateway offers right now: allowlisted for the image tool
// (`tools.image.allow`, plus `tools.image.default`) and served by a configured provider that has
// the image capability. The public catalog, the styles list and the endpoints all read this.
import type { Config } from "../../config/resolved-config.js";
import type { Provider } from "../../providers/provider.js";
import type { ImageModelEntry } from "../../config/catalog-schema.js";
import { publicImageCatalog, type PublicImageCatalog } from "./image-catalog.js";

export interface ImageModelsView {
  config: Config;
  providers: ReadonlyMap<string, Provider>;
}

/** The ids the operator allowed for image generation (the default counts as allowed). */
export function allowedImageModelIds(config: Pick<Config, "tools">): string[] {
  const tool = config.tools.image;
  if (!tool) return [];
  const ids = [...tool.allow];
  if (tool.default !== null && !ids.includes(tool.default)) ids.unshift(tool.default);
  return ids;
}

/** Its provider is configured and offers images. */
export function imageModelServed(view: ImageModelsView, model: ImageModelEntry): boolean {
  return view.config.providers[model.provider] !== undefined && view.providers.get(model.provider)?.images !== undefined;
}

/** Allowlisted and served, in catalog order. */
export function offeredImageModels(view: ImageModelsView): ImageModelEntry[] {
  const allowed = new Set(allowedImageModelIds(view.config));
  return view.config.catalog.image.filter((model) => allowed.has(model.id) && imageModelServed(view, model));
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
