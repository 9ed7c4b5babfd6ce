// Reading the image catalog of the config: finding a model, its default role, and the public
// catalog (GET /v1/public/image-models) without provider internals.

import type { CatalogConfig } from "../../config/catalog-schema.js";
import type { PlanLimits } from "../../config/config-schema.js";
import type { ImageConstraints, ImageModelEntry, ImageOperation, ImagePricing, ImageResolution } from "../../config/image-catalog-schema.js";

export { type CatalogConfig, DEFAULT_IMAGE_MODELS } from "../../config/catalog-schema.js";
export type { ImageModelEntry } from "../../config/image-catalog-schema.js";
export { type ImagePriceRequest, imagePriceCredits, imageReservationCredits } from "./image-price.js";
export { type ImageSizeRequest, type ResolvedImageSize, resolveImageSize } from "./image-size.js";

export function findImageModel(catalog: Pick<CatalogConfig, "image">, id: string): ImageModelEntry | undefined {
  return catalog.image.find((model) => model.id === id);
}

/** The role of a picture sent without one (a bare URL, any multipart part): `reference`, or the model's only role. */
export function defaultImageRole(model: ImageModelEntry): "edit" | "subject" | "reference" | undefined {
  const roles = model.constraints.referenceRoles;
  return roles.includes("reference") ? "reference" : roles[0];
}

export interface PublicImageModel {
  id: string;
  name: string;
  description?: string;
  operations: ImageOperation[];
  freeTier: boolean;
  constraints: ImageConstraints;
  /** Credits (1 credit = $0.000001). */
  pricing: ImagePricing;
}

export interface PublicImagePlanLimits {
  /** Largest `n` per call. */
  maxImages: number;
  /** Largest `resolution`. */
  maxResolution: ImageResolution;
}

export interface PublicImageCatalog {
  models: PublicImageModel[];
  planLimits: Record<string, PublicImagePlanLimits>;
}

export interface PublicImageCatalogOptions {
  /** Which models to list (the gateway passes: provider configured and allowlisted for a tool). */
  include?: (model: ImageModelEntry) => boolean;
}

export function publicImageCatalog(
  catalog: Pick<CatalogConfig, "image">,
  plans: Record<string, Pick<PlanLimits, "imageMaxN" | "imageMaxResolution">>,
  options: PublicImageCatalogOptions = {},
): PublicImageCatalog {
  const models = catalog.image.filter((model) => options.include?.(model) ?? true).map(publicModel);
  const planLimits: Record<string, PublicImagePlanLimits> = {};
  for (const [name, limits] of Object.entries(plans)) planLimits[name] = { maxImages: limits.imageMaxN, maxResolution: limits.imageMaxResolution };
  return { models, planLimits };
}

function publicModel(model: ImageModelEntry): PublicImageModel {
  const entry: PublicImageModel = {
    id: model.id,
    name: model.name,
    operations: [...model.operations],
    freeTier: model.freeTier,
    constraints: model.constraints,
    pricing: model.pricing,
  };
  if (model.description !== undefined) entry.description = model.description;
  return entry;
}
