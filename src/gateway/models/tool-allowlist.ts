// Which models a tool offers, for every tool (image, upscale, background, speech, transcription,
// video, describe, ocr, search): the ids the operator allowlisted in `tools.<tool>` (the default
// counts as allowed), those found in the tool's catalog, and served by a configured provider with
// the tool's capability. A call names one, or gets the tool's default, or the first on offer.
// Refusals, in order: nothing on offer (503 provider_not_configured), not allowlisted (400
// model_not_allowed), its provider gone (503), a free plan on a paid model (403).
import type { PlanLimits } from "../../config/config-schema.js";
import type { Config } from "../../config/resolved-config.js";
import type { Provider } from "../../providers/provider.js";
import { InvalidRequestError, ModelRequiresUpgradeError, ProviderNotConfiguredError } from "../errors.js";

/** What a catalog is read against: the config now and the providers built from it. */
export interface ModelsView {
  config: Config;
  providers: ReadonlyMap<string, Provider>;
}

/** A provider capability a tool's models need. */
export type Capability = Exclude<keyof Provider, "name" | "type">;

/** The ids the operator allowed for a tool (the default counts as allowed), in allowlist order. */
export function allowedModelIds(config: Pick<Config, "tools">, tool: string): string[] {
  const entry = config.tools[tool];
  if (!entry) return [];
  const ids = [...entry.allow];
  if (entry.default !== null && !ids.includes(entry.default)) ids.unshift(entry.default);
  return ids;
}

/** The allowed ids with the tool's default first (the order a fallback across models tries them). */
export function allowedModelIdsDefaultFirst(config: Pick<Config, "tools">, tool: string): string[] {
  const entry = config.tools[tool];
  if (!entry) return [];
  return [...(entry.default !== null ? [entry.default] : []), ...entry.allow.filter((id) => id !== entry.default)];
}

/** The model's provider is configured and offers the capability. */
export function providerServes(view: ModelsView, provider: string, capability: Capability): boolean {
  return view.config.providers[provider] !== undefined && view.providers.get(provider)?.[capability] !== undefined;
}

/** How a tool finds its models in its catalog, and how one is served. */
export interface ToolModels<Model> {
  tool: string;
  find: (id: string) => Model | undefined;
  served: (model: Model) => boolean;
}

/** Allowlisted, found in the catalog and served, in allowlist order. */
export function offeredModels<Model>(config: Pick<Config, "tools">, models: ToolModels<Model>): Model[] {
  return allowedModelIds(config, models.tool)
    .map((id) => models.find(id))
    .filter((model): model is Model => model !== undefined && models.served(model));
}

export interface ModelChoice<Model> extends ToolModels<Model> {
  /** What the tool is called in the 503 ("Video generation"). */
  label: string;
  /** What its models are called in the 400 ("video", "speech"). */
  noun: string;
  /** The public list of the tool's models, named in the 400. */
  catalogPath: string;
}

/** The model a call asked for, else the tool's default, else the first on offer; refused as the header says. */
export function chooseOfferedModel<Model extends { id: string; provider: string; freeTier: boolean }>(
  config: Config,
  choice: ModelChoice<Model>,
  requested: string | undefined,
  context: { plan: PlanLimits; planName: string },
): Model {
  const { tool } = choice;
  const offered = offeredModels(config, choice);
  const first = offered[0];
  if (first === undefined) {
    throw new ProviderNotConfiguredError(
      `${choice.label} is not configured on this gateway: no capable provider is set up and allowlisted in tools.${tool} (gw tools enable ${tool} MODEL).`,
    );
  }
  const id = requested ?? config.tools[tool]?.default ?? first.id;
  const model = choice.find(id);
  if (!allowedModelIds(config, tool).includes(id) || !model) {
    throw new InvalidRequestError(
      `The ${choice.noun} model \`${id}\` is not allowed here; allowed: ${offered.map((entry) => entry.id).join(", ")}. GET ${choice.catalogPath} lists them.`,
      { param: "model", code: "model_not_allowed" },
    );
  }
  if (!choice.served(model)) {
    throw new ProviderNotConfiguredError(`The ${choice.noun} model \`${id}\` needs the provider \`${model.provider}\`, which is not configured.`);
  }
  if (context.plan.freeTierOnly && !model.freeTier) throw new ModelRequiresUpgradeError(id, context.planName);
  return model;
}
