// OpenAI's built-in voices (https://platform.openai.com/docs/guides/text-to-speech): a fixed list per model, no endpoint lists them.
// Each voice speaks many languages, so none are named.

import type { Voice } from "../audio-types.js";

const TTS_1_VOICES = ["alloy", "ash", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer"];
const GPT_TTS_VOICES = [...TTS_1_VOICES, "ballad", "verse", "marin", "cedar"];

/**
 * tts-1 and tts-1-hd speak the older nine; gpt-4o-mini-tts (and its dated snapshots) all thirteen.
 * A model this list does not know (a newer one, a compatible server's) is offered all thirteen.
 */
export function openaiVoices(model: string): Voice[] {
  const ids = model === "tts-1" || model.startsWith("tts-1-") ? TTS_1_VOICES : GPT_TTS_VOICES;
  return ids.map((id) => ({ id, name: id.charAt(0).toUpperCase() + id.slice(1), languages: [] }));
}
