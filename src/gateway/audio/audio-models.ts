// Which audio models a gateway offers, and which one serves a call: allowlisted in
// `tools.speech` / `tools.transcription` (the default counts as allowed), in the audio catalog,
// and served by a configured provider with the capability (a local engine also has to be on this
// machine). Refusals, in order: nothing on offer (503 provider_not_configured), not allowlisted
// (400 model_not_allowed), its provider gone (503), a free plan on a paid model (403).
// A bare vendor id (`whisper-1`, `tts-1`, as the official OpenAI SDK sends) names the allowlisted
// catalog model it belongs to when exactly one matches, as the image aliases do. A model id may
// also name another provider of the catalog model's type (config/audio-model-lookup.ts).
import { type AudioModelEntry, type AudioToolName, findAudioModel } from "../../config/audio-model-lookup.js";
import type { PlanLimits } from "../../config/config-schema.js";
import type { Config } from "../../config/resolved-config.js";
import type { Provider } from "../../providers/provider.js";
import { InvalidRequestError, ModelRequiresUpgradeError, ProviderNotConfiguredError } from "../errors.js";

export type { AudioToolName } from "../../config/audio-model-lookup.js";

export interface AudioModelsView {
  config: Config;
  providers: ReadonlyMap<string, Provider>;
}

const TOOL_LABELS: Record<AudioToolName, string> = { speech: "Speech synthesis", transcription: "Transcription" };

/** The ids the operator allowed for a tool (the default counts as allowed). */
export function allowedAudioModelIds(config: Pick<Config, "tools">, tool: AudioToolName): string[] {
  const entry = config.tools[tool];
  if (!entry) return [];
  const ids = [...entry.allow];
  if (entry.default !== null && !ids.includes(entry.default)) ids.unshift(entry.default);
  return ids;
}

/** Its provider is configured and has the capability. */
export function audioModelServed(view: AudioModelsView, tool: AudioToolName, model: { provider: string }): boolean {
  if (view.config.providers[model.provider] === undefined) return false;
  const provider = view.providers.get(model.provider);
  return tool === "speech" ? provider?.speech !== undefined : provider?.transcription !== undefined;
}

/** Allowlisted, found in the catalog and served (engine readiness aside), in allowlist order. */
export function offeredAudioModels<Tool extends AudioToolName>(view: AudioModelsView, tool: Tool): AudioModelEntry<Tool>[] {
  return allowedAudioModelIds(view.config, tool)
    .map((id) => findAudioModel(view.config, tool, id))
    .filter((model): model is AudioModelEntry<Tool> => model !== undefined && audioModelServed(view, tool, model));
}

/** A bare vendor id (no `/`) as the one allowlisted catalog model with that vendor id, else as sent. */
export function resolveAudioAlias(config: Config, tool: AudioToolName, requested: string | undefined): string | undefined {
  if (requested === undefined || requested.includes("/")) return requested;
  const allowed = allowedAudioModelIds(config, tool);
  const matches = allowed.filter((id) => findAudioModel(config, tool, id)?.model === requested);
  return matches.length === 1 ? matches[0]! : requested;
}

export function chooseAudioModel<Tool extends AudioToolName>(
  view: AudioModelsView,
  tool: Tool,
  requested: string | undefined,
  context: { plan: PlanLimits; planName: string },
): AudioModelEntry<Tool> {
  const offered = offeredAudioModels(view, tool);
  if (offered.length === 0) {
    throw new ProviderNotConfiguredError(
      `${TOOL_LABELS[tool]} is not configured on this gateway: no capable provider is set up and allowlisted in tools.${tool} (gw tools enable ${tool} MODEL).`,
    );
  }
  const allowed = allowedAudioModelIds(view.config, tool);
  const id = resolveAudioAlias(view.config, tool, requested) ?? view.config.tools[tool]?.default ?? offered[0]!.id;
  const model = findAudioModel(view.config, tool, id);
  if (!allowed.includes(id) || !model) {
    throw new InvalidRequestError(
      `The ${tool} model \`${id}\` is not allowed here; allowed: ${offered.map((entry) => entry.id).join(", ")}. GET /v1/public/audio-models lists them.`,
      { param: "model", code: "model_not_allowed" },
    );
  }
  if (!audioModelServed(view, tool, model)) {
    throw new ProviderNotConfiguredError(`The ${tool} model \`${id}\` needs the provider \`${model.provider}\`, which is not configured.`);
  }
  if (context.plan.freeTierOnly && !model.freeTier) throw new ModelRequiresUpgradeError(id, context.planName);
  return model;
}
