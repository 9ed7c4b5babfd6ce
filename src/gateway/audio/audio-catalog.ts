// GET /v1/public/audio-models: the speech and transcription models on offer (allowlisted,
// provider configured, engine on this machine), each with its constraints (character cap,
// formats, voices, speed range; response formats, longest audio, largest upload, speakers) and
// price, and per plan which of them it reaches. Public, like the image catalog.
import type { SpeechModelEntry, TranscriptionModelEntry } from "../../config/audio-catalog-schema.js";
import { type AudioModelsView, offeredAudioModels } from "./audio-models.js";
import { readySpeechModels } from "./voice-catalog.js";

type PublicEntry<Entry> = Omit<Entry, "model">;

export interface PublicAudioCatalog {
  speech: PublicEntry<SpeechModelEntry>[];
  transcription: PublicEntry<TranscriptionModelEntry>[];
  /** Per plan: the models it reaches. */
  planLimits: Record<string, { freeTierOnly: boolean; speech: string[]; transcription: string[] }>;
}

export async function publicAudioCatalog(view: AudioModelsView, maxUploadBytes: number): Promise<PublicAudioCatalog> {
  const speech = await readySpeechModels(view);
  const transcription = offeredAudioModels(view, "transcription");
  const planLimits: PublicAudioCatalog["planLimits"] = {};
  for (const [name, limits] of Object.entries(view.config.resolvedPlans)) {
    const reaches = (model: { freeTier: boolean }) => !limits.freeTierOnly || model.freeTier;
    planLimits[name] = {
      freeTierOnly: limits.freeTierOnly,
      speech: speech.filter(reaches).map((model) => model.id),
      transcription: transcription.filter(reaches).map((model) => model.id),
    };
  }
  return {
    speech: speech.map(({ model: _vendorModel, ...entry }) => entry),
    transcription: transcription.map(({ model: _vendorModel, ...entry }) => ({
      ...entry,
      constraints: { ...entry.constraints, maxBytes: Math.min(entry.constraints.maxBytes, maxUploadBytes) },
    })),
    planLimits,
  };
}
