// The account's voices from ElevenLabs' GET /v1/voices (https://elevenlabs.io/docs/api-reference), kept for a few
// minutes: the voice list is read on every speech request's validation and by the public voice
// catalog, and it changes only when someone edits the account.

import type { Voice } from "../audio-types.js";
import { isObject } from "../openai-message-parts.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { readRedactedJson } from "../sse.js";
import type { ElevenLabsRequest } from "./elevenlabs-request.js";

export const VOICE_CACHE_MS = 5 * 60_000;

export function createElevenLabsVoices(
  context: ProviderContext,
  request: ElevenLabsRequest,
  { ttlMs = VOICE_CACHE_MS, now = Date.now }: { ttlMs?: number; now?: () => number } = {},
): (signal: AbortSignal) => Promise<Voice[]> {
  // Only a list that arrived is kept: a failed read is tried again on the next call.
  let cached: { voices: Voice[]; at: number } | undefined;
  return async (signal) => {
    if (cached && now() - cached.at < ttlMs) return cached.voices;
    const response = await request({ method: "GET", path: "/v1/voices", signal });
    const voices = convertFromElevenLabsVoices(context.name, await readRedactedJson(context, response, signal));
    cached = { voices, at: now() };
    return voices;
  };
}

export function convertFromElevenLabsVoices(provider: string, body: unknown): Voice[] {
  if (!isObject(body) || !Array.isArray(body.voices)) throw new UpstreamNetworkError(provider, "invalid_response", "the answer has no voices list");
  const voices: Voice[] = [];
  for (const item of body.voices) {
    if (!isObject(item) || typeof item.voice_id !== "string" || item.voice_id === "") continue;
    voices.push({ id: item.voice_id, name: typeof item.name === "string" && item.name !== "" ? item.name : item.voice_id, languages: languagesOf(item) });
  }
  return voices;
}

/** From `labels.language` and the verified languages' codes; an accent alone names no language. */
function languagesOf(voice: Record<string, unknown>): string[] {
  const languages = new Set<string>();
  const label = isObject(voice.labels) ? voice.labels.language : undefined;
  if (typeof label === "string" && label !== "") languages.add(label);
  for (const list of [voice.verified_languages, voice.verbose_languages]) {
    for (const entry of Array.isArray(list) ? list : []) {
      const language = isObject(entry) ? entry.language : entry;
      if (typeof language === "string" && language !== "") languages.add(language);
    }
  }
  return [...languages];
}
