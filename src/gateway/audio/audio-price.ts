// Audio prices in credits, from the catalog: transcription per started second of audio (the
// length the gateway measured, not the vendor's claim), speech per character of input (Unicode
// code points, as the character caps count them).
import type { SpeechModelEntry, TranscriptionModelEntry } from "../../config/audio-catalog-schema.js";

export function billedSeconds(durationSeconds: number): number {
  return Math.max(1, Math.ceil(durationSeconds - 1e-6));
}

export function transcriptionCredits(model: TranscriptionModelEntry, durationSeconds: number): number {
  return Math.ceil((billedSeconds(durationSeconds) * model.pricing.perMinute) / 60);
}

export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

export function speechCredits(model: SpeechModelEntry, characters: number): number {
  return characters * model.pricing.perCharacter;
}
