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
import { allowedModelIds, chooseOfferedModel, type ModelsView, offeredModels, providerServes, type ToolModels } from "../models/tool-allowlist.js";

export type { AudioToolName } from "../../config/audio-model-lookup.js";

export type AudioModelsView = ModelsView;

const TOOL_LABELS: Record<AudioToolName, string> = { speech: "Speech synthesis", transcription: "Transcription" };

/** The tool's catalog models, served when their provider is configured and has the capability. */
function audioModels<Tool extends AudioToolName>(view: AudioModelsView, tool: Tool): ToolModels<AudioModelEntry<Tool>> {
  return {
    tool,
    find: (id) => findAudioModel(view.config, tool, id),
    served: (model) => providerServes(view, model.provider, tool),
  };
}

/** Allowlisted, found in the catalog and served (engine readiness aside), in allowlist order. */
export function offeredAudioModels<Tool extends AudioToolName>(view: AudioModelsView, tool: Tool): AudioModelEntry<Tool>[] {
  return offeredModels(view.config, audioModels(view, tool));
}

/** A bare vendor id (no `/`) as the one allowlisted catalog model with that vendor id, else as sent. */
export function resolveAudioAlias(config: Config, tool: AudioToolName, requested: string | undefined): string | undefined {
  if (requested === undefined || requested.includes("/")) return requested;
  const matches = allowedModelIds(config, tool).filter((id) => findAudioModel(config, tool, id)?.model === requested);
  return matches.length === 1 ? matches[0] : requested;
}

export function chooseAudioModel<Tool extends AudioToolName>(
  view: AudioModelsView,
  tool: Tool,
  requested: string | undefined,
  context: { plan: PlanLimits; planName: string },
): AudioModelEntry<Tool> {
  const choice = { ...audioModels(view, tool), label: TOOL_LABELS[tool], noun: tool, catalogPath: "/v1/public/audio-models" };
  return chooseOfferedModel(view.config, choice, resolveAudioAlias(view.config, tool, requested), context);
}
