// The audio capabilities: transcription (speech to text) and speech synthesis (text to speech),
// vendor-neutral. Providers take and give bytes; sniffing and probing the caller's audio,
// converting between formats, rendering SRT / WebVTT, storage and billing are the gateway's.
//
// The contract: the gateway asks a transcription provider for time-bounded segments only when the
// model's catalog entry says it yields them, and a speech provider for the format the caller
// wants; a provider answers in the format it could produce (SpeechAudio.format) and the gateway
// converts with ffmpeg when they differ. A value the vendor cannot honour is refused with
// UnsupportedContentError, never dropped.

import type { SpeechFormat } from "../config/audio-catalog-schema.js";

export { SPEECH_FORMATS, type SpeechFormat } from "../config/audio-catalog-schema.js";

/** The sample rate of `pcm` answers (OpenAI's: 24 kHz, 16-bit signed little-endian, mono). */
export const PCM_SAMPLE_RATE = 24_000;

export interface TranscriptionRequest {
  /** The vendor's model id (the catalog entry's `model`). */
  model: string;
  /** The caller's audio, already sniffed and probed by the gateway. */
  audio: { bytes: Buffer; filename: string; mediaType: string };
  /** A language hint (ISO 639-1, e.g. `en`). */
  language?: string;
  /** Time-bounded segments are wanted (verbose_json, srt, vtt). */
  segments: boolean;
}

export interface TranscriptSegment {
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  text: string;
  /** Only when the vendor labelled a speaker; 0 is a real speaker. */
  speaker?: number;
}

export interface Transcript {
  text: string;
  /** As the vendor names it (`english`, `en` ...), when it says. */
  language?: string;
  /** The audio's length as the vendor measured it, when it says. */
  durationSeconds?: number;
  /** Present when segments were asked for and the vendor gave them. */
  segments?: TranscriptSegment[];
  upstreamRequestId?: string;
}

export interface TranscriptionCapability {
  transcribe(request: TranscriptionRequest, options: { signal: AbortSignal }): Promise<Transcript>;
}

export interface SpeechRequest {
  /** The vendor's model id (the catalog entry's `model`). */
  model: string;
  input: string;
  /** A voice id of this provider (checked by the gateway against `voices`). */
  voice: string;
  /** Playback rate, 0.25 to 4 (1 is normal). */
  speed: number;
  /** The format the caller wants; the provider may answer in another it can produce. */
  format: SpeechFormat;
}

export interface SpeechAudio {
  bytes: Buffer;
  /** What the bytes are. */
  format: SpeechFormat;
  /** For `pcm` only: samples per second (mono, 16-bit little-endian). */
  sampleRate?: number;
  upstreamRequestId?: string;
}

export interface Voice {
  /** The id a request names in `voice`. */
  id: string;
  name: string;
  /** Language codes or names the voice speaks, when known. */
  languages: string[];
}

export interface SpeechCapability {
  synthesize(request: SpeechRequest, options: { signal: AbortSignal }): Promise<SpeechAudio>;
  /**
   * The voices for one of the provider's models (the vendor model id), from the vendor or the
   * engine itself. Providers with a fixed list in the catalog may answer it from there.
   */
  voices(model: string, options: { signal: AbortSignal }): Promise<Voice[]>;
  /** Whether the engine or account can serve now; absent means ready. */
  ready?(): Promise<boolean>;
}
