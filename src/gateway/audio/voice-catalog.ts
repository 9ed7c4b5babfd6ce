// The voices of the speech models on offer (GET /v1/audio/voices, and the check of a request's
// `voice`): a model's fixed voices from its catalog entry, else what its provider lists (an
// ElevenLabs account's voices, the espeak-ng engine's). A model whose engine is not on this
// machine (speech.ready() false) is not on offer, so neither are its voices.
import type { SpeechModelEntry } from "../../config/audio-catalog-schema.js";
import type { Voice } from "../../providers/audio-types.js";
import { withAudioEngine } from "./audio-engine-errors.js";
import { type AudioModelsView, offeredAudioModels } from "./audio-models.js";

export interface VoiceEntry {
  id: string;
  name: string;
  provider: string;
  /** The public ids of the speech models that speak it. */
  models: string[];
  languages: string[];
}

/** Whether the model's provider can speak now (a local engine is installed). */
export async function speechModelReady(view: AudioModelsView, model: SpeechModelEntry): Promise<boolean> {
  const speech = view.providers.get(model.provider)?.speech;
  if (!speech) return false;
  return speech.ready ? speech.ready() : true;
}

/** The speech models on offer whose engine is ready, in catalog order. */
export async function readySpeechModels(view: AudioModelsView): Promise<SpeechModelEntry[]> {
  const offered = offeredAudioModels(view, "speech");
  const ready = await Promise.all(offered.map((model) => speechModelReady(view, model)));
  return offered.filter((_, index) => ready[index]);
}

/** One model's voices. Throws what the provider throws (a vendor that cannot be reached). */
export async function voicesOf(view: AudioModelsView, model: SpeechModelEntry, signal: AbortSignal): Promise<Voice[]> {
  if (model.constraints.voices.length > 0) {
    return model.constraints.voices.map((id) => ({ id, name: id.charAt(0).toUpperCase() + id.slice(1), languages: [] }));
  }
  const speech = view.providers.get(model.provider)?.speech;
  return speech ? withAudioEngine(model.provider, () => speech.voices(model.model, { signal })) : [];
}

/** Every ready model's voices, one entry per provider and voice; a provider that cannot list them is left out and reported. */
export async function listVoices(
  view: AudioModelsView,
  options: { model?: string; signal: AbortSignal; warn?: (message: string) => void },
): Promise<VoiceEntry[]> {
  const models = (await readySpeechModels(view)).filter((model) => options.model === undefined || model.id === options.model);
  const listed = await Promise.all(
    models.map(async (model) => {
      try {
        return { model, voices: await voicesOf(view, model, options.signal) };
      } catch (error) {
        options.warn?.(`voices of ${model.id} could not be listed: ${error instanceof Error ? error.message : String(error)}`);
        return { model, voices: [] as Voice[] };
      }
    }),
  );
  const entries = new Map<string, VoiceEntry>();
  for (const { model, voices } of listed) {
    for (const voice of voices) {
      const key = `${model.provider}\u0000${voice.id}`;
      const entry = entries.get(key);
      if (entry) {
        entry.models.push(model.id);
        for (const language of voice.languages) if (!entry.languages.includes(language)) entry.languages.push(language);
      } else {
        entries.set(key, { id: voice.id, name: voice.name, provider: model.provider, models: [model.id], languages: [...voice.languages] });
      }
    }
  }
  return [...entries.values()];
}
