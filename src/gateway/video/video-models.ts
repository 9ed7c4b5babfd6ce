// Which video models a gateway offers, and which one serves a job: allowlisted in `tools.video`
// (the default counts as allowed), in `catalog.video`, served by a configured provider with the
// video capability. Refusals, in order: nothing on offer (503 provider_not_configured), not
// allowlisted (400 model_not_allowed), its provider gone (503), a free plan on a paid model (403).
import type { PlanLimits } from "../../config/config-schema.js";
import type { Config } from "../../config/resolved-config.js";
import type { VideoModelEntry } from "../../config/video-catalog-schema.js";
import type { Provider } from "../../providers/provider.js";
import { InvalidRequestError, ModelRequiresUpgradeError, ProviderNotConfiguredError } from "../errors.js";

export interface VideoModelsView {
  config: Config;
  providers: ReadonlyMap<string, Provider>;
}

export function allowedVideoModelIds(config: Pick<Config, "tools">): string[] {
  const entry = config.tools.video;
  if (!entry) return [];
  const ids = [...entry.allow];
  if (entry.default !== null && !ids.includes(entry.default)) ids.unshift(entry.default);
  return ids;
}

export function videoModelServed(view: VideoModelsView, model: VideoModelEntry): boolean {
  return view.config.providers[model.provider] !== undefined && view.providers.get(model.provider)?.video !== undefined;
}

/** Allowlisted, in the catalog and served, in allowlist order. */
export function offeredVideoModels(view: VideoModelsView): VideoModelEntry[] {
  return allowedVideoModelIds(view.config)
    .map((id) => view.config.catalog.video.find((model) => model.id === id))
    .filter((model): model is VideoModelEntry => model !== undefined && videoModelServed(view, model));
}

export function chooseVideoModel(view: VideoModelsView, requested: string | undefined, context: { plan: PlanLimits; planName: string }): VideoModelEntry {
  const offered = offeredVideoModels(view);
  if (offered.length === 0) {
    throw new ProviderNotConfiguredError(
      "Video generation is not configured on this gateway: no capable provider is set up and allowlisted in tools.video (gw tools enable video MODEL).",
    );
  }
  const id = requested ?? view.config.tools.video?.default ?? offered[0]!.id;
  const model = view.config.catalog.video.find((entry) => entry.id === id);
  if (!allowedVideoModelIds(view.config).includes(id) || !model) {
    throw new InvalidRequestError(
      `The video model \`${id}\` is not allowed here; allowed: ${offered.map((entry) => entry.id).join(", ")}. GET /v1/public/video-models lists them.`,
      { param: "model", code: "model_not_allowed" },
    );
  }
  if (!videoModelServed(view, model))
    throw new ProviderNotConfiguredError(`The video model \`${id}\` needs the provider \`${model.provider}\`, which is not configured.`);
  if (context.plan.freeTierOnly && !model.freeTier) throw new ModelRequiresUpgradeError(id, context.planName);
  return model;
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
