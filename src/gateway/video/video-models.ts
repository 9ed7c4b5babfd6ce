// Which video models a gateway offers, and which one serves a job: allowlisted in `tools.video`
// (the default counts as allowed), in `catalog.video`, served by a configured provider with the
// video capability. Refusals, in order: nothing on offer (503 provider_not_configured), not
// allowlisted (400 model_not_allowed), its provider gone (503), a free plan on a paid model (403).
import type { PlanLimits } from "../../config/config-schema.js";
import type { VideoModelEntry } from "../../config/video-catalog-schema.js";
import { chooseOfferedModel, type ModelsView, offeredModels, providerServes, type ToolModels } from "../models/tool-allowlist.js";

export type VideoModelsView = ModelsView;

function videoModels(view: VideoModelsView): ToolModels<VideoModelEntry> {
  return {
    tool: "video",
    find: (id) => view.config.catalog.video.find((model) => model.id === id),
    served: (model) => providerServes(view, model.provider, "video"),
  };
}

/** Allowlisted, in the catalog and served, in allowlist order. */
export function offeredVideoModels(view: VideoModelsView): VideoModelEntry[] {
  return offeredModels(view.config, videoModels(view));
}

export function chooseVideoModel(view: VideoModelsView, requested: string | undefined, context: { plan: PlanLimits; planName: string }): VideoModelEntry {
  const choice = { ...videoModels(view), label: "Video generation", noun: "video", catalogPath: "/v1/public/video-models" };
  return chooseOfferedModel(view.config, choice, requested, context);
}

export interface PublicVideoModel {
  id: string;
  name: string;
  description?: string;
  provider: string;
  freeTier: boolean;
  constraints: {
    referenceImage: "none" | "optional" | "required";
    maxPromptLength?: number;
    duration: { min: number; max: number; values?: number[]; default: number };
    resolutions: string[];
    ratios: string[];
    sizes: Record<string, Record<string, string>>;
    defaultResolution: string;
    defaultRatio: string;
  };
  /** Credits per second of finished clip, per resolution. */
  pricing: { perSecond: Record<string, number> };
}

/** GET /v1/public/video-models. */
export function publicVideoCatalog(view: VideoModelsView): { models: PublicVideoModel[] } {
  return {
    models: offeredVideoModels(view).map((model) => {
      const { resolutions, ...constraints } = model.constraints;
      const entry: PublicVideoModel = {
        id: model.id,
        name: model.name,
        provider: model.provider,
        freeTier: model.freeTier,
        constraints: {
          ...constraints,
          resolutions: Object.keys(resolutions),
          ratios: [...new Set(Object.values(resolutions).flatMap((sizes) => Object.keys(sizes)))],
          sizes: resolutions,
        },
        pricing: { perSecond: { ...model.pricing.perSecond } },
      };
      if (model.description !== undefined) entry.description = model.description;
      return entry;
    }),
  };
}
