// Finding an audio model by id. Besides the catalog's own ids, `PROVIDER/MODEL` names a catalog
// model of the same vendor type served by another configured provider: a self-hosted
// OpenAI-compatible Whisper server added as `whisper` (type openai) serves `whisper/whisper-1`
// with the catalog's `openai/whisper-1` constraints and price, without a catalog entry of its own.
import type { SpeechModelEntry, TranscriptionModelEntry } from "./audio-catalog-schema.js";
import type { CatalogConfig } from "./catalog-schema.js";
import type { ProviderConfig } from "./config-schema.js";

export type AudioToolName = "speech" | "transcription";
export type AudioModelEntry<Tool extends AudioToolName> = Tool extends "speech" ? SpeechModelEntry : TranscriptionModelEntry;

interface LookupConfig {
  catalog: CatalogConfig;
  providers: Record<string, ProviderConfig>;
}

export function audioCatalogOf<Tool extends AudioToolName>(config: Pick<LookupConfig, "catalog">, tool: Tool): readonly AudioModelEntry<Tool>[] {
  return (tool === "speech" ? config.catalog.speech : config.catalog.transcription) as unknown as readonly AudioModelEntry<Tool>[];
}

export function findAudioModel<Tool extends AudioToolName>(config: LookupConfig, tool: Tool, id: string): AudioModelEntry<Tool> | undefined {
  const catalog = audioCatalogOf(config, tool);
  const exact = catalog.find((entry) => entry.id === id);
  if (exact) return exact;
  const slash = id.indexOf("/");
  if (slash <= 0) return undefined;
  const providerName = id.slice(0, slash);
  // The provider name is the caller's: own keys only.
  const type = Object.hasOwn(config.providers, providerName) ? config.providers[providerName]?.type : undefined;
  if (type === undefined) return undefined;
  const vendorModel = id.slice(slash + 1);
  // A catalog entry's vendor type: its provider's configured type, else its provider name (the built-in entries name their type).
  const template = catalog.find((entry) => entry.model === vendorModel && (config.providers[entry.provider]?.type ?? entry.provider) === type);
  return template ? { ...template, id, provider: providerName } : undefined;
}
