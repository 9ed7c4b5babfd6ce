// The account's voices from ElevenLabs' GET /v1/voices (https://elevenlabs.io/docs/api-reference), kept for a few
// minutes: the voice list is read on every speech request's validation and by the public voice
// catalog, and it changes only when someone edits the account.

import { isObject } from "../../json/json-values.js";
import type { Voice } from "../audio-types.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { readAs } from "../upstream-schema.js";
import type { VendorRequest } from "../vendor-request.js";
import { ElevenLabsVoice, ElevenLabsVoices } from "./elevenlabs-api.js";

export const VOICE_CACHE_MS = 5 * 60_000;

export function createElevenLabsVoices(
  context: ProviderContext,
  vendor: VendorRequest,
  { ttlMs = VOICE_CACHE_MS, now = Date.now }: { ttlMs?: number; now?: () => number } = {},
): (signal: AbortSignal) => Promise<Voice[]> {
  // Only a list that arrived is kept: a failed read is tried again on the next call.
  let cached: { voices: Voice[]; at: number } | undefined;
  return async (signal) => {
    if (cached && now() - cached.at < ttlMs) return cached.voices;
    const response = await vendor.send({ method: "GET", path: "/v1/voices", answer: "audio", signal });
    const voices = convertFromElevenLabsVoices(context.name, await vendor.readJson(response, signal));
    cached = { voices, at: now() };
    return voices;
  };
}

export function convertFromElevenLabsVoices(provider: string, body: unknown): Voice[] {
  const list = readAs(ElevenLabsVoices, body);
  if (!list) throw new UpstreamNetworkError(provider, "invalid_response", "the answer has no voices list");
  const voices: Voice[] = [];
  for (const item of list.voices) {
    const voice = readAs(ElevenLabsVoice, item);
    if (voice) voices.push({ id: voice.voice_id, name: voice.name ?? voice.voice_id, languages: languagesOf(voice) });
  }
  return voices;
}

/** From `labels.language` and the verified languages' codes; an accent alone names no language. */
function languagesOf(voice: ElevenLabsVoice): string[] {
  const languages = new Set<string>();
  const label = voice.labels?.language;
  if (label !== undefined) languages.add(label);
  for (const list of [voice.verified_languages, voice.verbose_languages]) {
    for (const entry of list ?? []) {
      const language = isObject(entry) ? entry.language : entry;
      if (typeof language === "string" && language !== "") languages.add(language);
    }
  }
  return [...languages];
}
