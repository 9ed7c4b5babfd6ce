// The pixel size a generation or edit asks for, from the catalog: `size` when the model takes
// explicit sizes (it must be one it draws), else the aspect ratio and resolution tier (each
// defaulting to the model's). The tier comes back too, for the plan's resolution cap.
import type { ImageModelEntry, ImageResolution } from "../../config/image-catalog-schema.js";

export interface ImageSizeRequest {
  aspectRatio?: string;
  resolution?: ImageResolution;
  /** `WIDTHxHEIGHT`. */
  size?: string;
}

export type ResolvedImageSize =
  | { width: number; height: number; aspectRatio: string; resolution: ImageResolution }
  | { error: { param: "size" | "aspect_ratio" | "resolution"; message: string } };

export function resolveImageSize(model: ImageModelEntry, request: ImageSizeRequest): ResolvedImageSize {
  const constraints = model.constraints;
  const tiers = Object.entries(constraints.resolutions) as Array<[ImageResolution, Record<string, string>]>;
  if (tiers.length === 0) return { error: { param: "size", message: `${model.id} does not draw pictures.` } };
  if (request.size !== undefined) return explicitSize(model, tiers, request.size, request.aspectRatio);

  const aspectRatio = request.aspectRatio ?? constraints.defaultAspectRatio ?? constraints.aspectRatios[0]!;
  if (!constraints.aspectRatios.includes(aspectRatio)) {
    return { error: { param: "aspect_ratio", message: `${model.id} draws the aspect ratios ${constraints.aspectRatios.join(", ")}; not ${aspectRatio}.` } };
  }
  const resolution = request.resolution ?? constraints.defaultResolution ?? tiers[0]![0];
  const sizes = constraints.resolutions[resolution];
  if (!sizes) {
    return { error: { param: "resolution", message: `${model.id} draws at ${tiers.map(([tier]) => tier).join(", ")}; not ${resolution}.` } };
  }
  const size = sizes[aspectRatio];
  if (!size) {
    const ratios = Object.keys(sizes).join(", ");
    return { error: { param: "aspect_ratio", message: `${model.id} draws ${aspectRatio} at no ${resolution} size; at ${resolution} it draws ${ratios}.` } };
  }
  return { ...dimensions(size), aspectRatio, resolution };
}

function explicitSize(
  model: ImageModelEntry,
  tiers: Array<[ImageResolution, Record<string, string>]>,
  size: string,
  aspectRatio: string | undefined,
): ResolvedImageSize {
  if (!/^[1-9]\d*x[1-9]\d*$/.test(size)) return { error: { param: "size", message: `size is WIDTHxHEIGHT in pixels (1024x1024); not "${size}".` } };
  if (!model.constraints.features.explicitSize) {
    return { error: { param: "size", message: `${model.id} does not take an explicit size; send aspect_ratio and resolution instead.` } };
  }
  for (const [resolution, sizes] of tiers) {
    for (const [ratio, pixels] of Object.entries(sizes)) {
      if (pixels !== size) continue;
      if (aspectRatio !== undefined && aspectRatio !== ratio) {
        return { error: { param: "aspect_ratio", message: `size ${size} is ${ratio}, which contradicts aspect_ratio ${aspectRatio}.` } };
      }
      return { ...dimensions(size), aspectRatio: ratio, resolution };
    }
  }
  const offered = [...new Set(tiers.flatMap(([, sizes]) => Object.values(sizes)))].join(", ");
  return { error: { param: "size", message: `${model.id} draws the sizes ${offered}; not ${size}.` } };
}

function dimensions(size: string): { width: number; height: number } {
  const [width, height] = size.split("x").map(Number) as [number, number];
  return { width, height };
}
