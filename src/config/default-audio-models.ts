// The built-in audio catalog: what each vendor's models take and cost. Prices are in credits
// (micro-dollars): per character of input for speech, per minute of audio (billed per started
// second) for transcription, from the vendors' list prices. A config's `catalog.speech` or
// `catalog.transcription` replaces the matching list as a whole.
import type { SpeechModelInput, TranscriptionModelInput } from "./audio-catalog-schema.js";

/** OpenAI's voices for tts-1 and tts-1-hd; gpt-4o-mini-tts speaks these and four more. */
const OPENAI_TTS_VOICES = ["alloy", "ash", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer"];
const OPENAI_GPT_TTS_VOICES = [...OPENAI_TTS_VOICES, "ballad", "verse", "marin", "cedar"];
const MIB = 1024 * 1024;
const OPENAI_TTS = { maxCharacters: 4096, voices: OPENAI_TTS_VOICES, defaultVoice: "alloy" };
/** ElevenLabs' default voice (Rachel) and the speeds its API takes. */
const ELEVENLABS = { defaultVoice: "21m00Tcm4TlvDq8ikWAM", speed: { min: 0.7, max: 1.2 } };
/** GPT-4o transcription: no timestamps, so no segment formats. */
const GPT_4O_TRANSCRIBE = { responseFormats: ["json", "text"], maxDurationSeconds: 1500, maxBytes: 25 * MIB } satisfies TranscriptionModelInput["constraints"];

export const DEFAULT_SPEECH_MODEL_INPUTS: SpeechModelInput[] = [
  {
    id: "local/espeak",
    provider: "local",
    model: "espeak",
    name: "eSpeak NG (local)",
    description: "The espeak-ng engine on this machine: formant synthesis, robotic but intelligible, many languages, free.",
    constraints: { maxCharacters: 4096, defaultVoice: "en-us" },
    pricing: { perCharacter: 0 },
  },
  {
    id: "openai/tts-1",
    provider: "openai",
    model: "tts-1",
    name: "OpenAI TTS",
    description: "Low-latency speech.",
    constraints: OPENAI_TTS,
    pricing: { perCharacter: 15 },
  },
  {
    id: "openai/tts-1-hd",
    provider: "openai",
    model: "tts-1-hd",
    name: "OpenAI TTS HD",
    description: "Higher-quality speech, slower than tts-1.",
    freeTier: false,
    constraints: OPENAI_TTS,
    pricing: { perCharacter: 30 },
  },
  {
    id: "openai/gpt-4o-mini-tts",
    provider: "openai",
    model: "gpt-4o-mini-tts",
    name: "GPT-4o mini TTS",
    constraints: { ...OPENAI_TTS, voices: OPENAI_GPT_TTS_VOICES },
    pricing: { perCharacter: 12 },
  },
  {
    id: "elevenlabs/eleven_multilingual_v2",
    provider: "elevenlabs",
    model: "eleven_multilingual_v2",
    name: "ElevenLabs Multilingual v2",
    description: "ElevenLabs' most lifelike voices, 29 languages; the account's voices.",
    freeTier: false,
    constraints: { maxCharacters: 10_000, ...ELEVENLABS },
    pricing: { perCharacter: 300 },
  },
  {
    id: "elevenlabs/eleven_flash_v2_5",
    provider: "elevenlabs",
    model: "eleven_flash_v2_5",
    name: "ElevenLabs Flash v2.5",
    description: "Fast, cheaper ElevenLabs speech, 32 languages; the account's voices.",
    constraints: { maxCharacters: 40_000, ...ELEVENLABS },
    pricing: { perCharacter: 150 },
  },
];

export const DEFAULT_TRANSCRIPTION_MODEL_INPUTS: TranscriptionModelInput[] = [
  {
    id: "openai/whisper-1",
    provider: "openai",
    model: "whisper-1",
    name: "Whisper",
    description: "OpenAI's Whisper, or any OpenAI-compatible Whisper server by base URL: all five formats.",
    constraints: { responseFormats: ["json", "text", "verbose_json", "srt", "vtt"], maxDurationSeconds: 7200, maxBytes: 25 * MIB },
    pricing: { perMinute: 6000 },
  },
  {
    id: "openai/gpt-4o-transcribe",
    provider: "openai",
    model: "gpt-4o-transcribe",
    name: "GPT-4o Transcribe",
    description: "More accurate than Whisper; no timestamps, so json and text only.",
    freeTier: false,
    constraints: GPT_4O_TRANSCRIBE,
    pricing: { perMinute: 6000 },
  },
  {
    id: "openai/gpt-4o-mini-transcribe",
    provider: "openai",
    model: "gpt-4o-mini-transcribe",
    name: "GPT-4o mini Transcribe",
    description: "Cheaper than GPT-4o Transcribe; no timestamps, so json and text only.",
    constraints: GPT_4O_TRANSCRIBE,
    pricing: { perMinute: 3000 },
  },
  {
    id: "deepgram/nova-3",
    provider: "deepgram",
    model: "nova-3",
    name: "Deepgram Nova-3",
    description: "Deepgram's newest model, with speakers labelled (diarization) and utterances as segments.",
    constraints: {
      responseFormats: ["json", "text", "verbose_json", "srt", "vtt"],
      maxDurationSeconds: 4 * 3600,
      maxBytes: 2048 * MIB,
      diarization: true,
    },
    pricing: { perMinute: 4300 },
  },
];
