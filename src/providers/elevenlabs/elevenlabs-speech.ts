// Speech against ElevenLabs' text-to-speech endpoint: JSON in, the audio's bytes out, the format
// chosen by the `output_format` query parameter. What ElevenLabs does not produce as the gateway
// names it (opus in its container, flac) is asked as mp3 and converted by the gateway.

import { requireAudio } from "../audio-answer.js";
import { PCM_SAMPLE_RATE, type SpeechAudio, type SpeechCapability, type SpeechFormat } from "../audio-types.js";
import type { ProviderContext } from "../provider.js";
import { UnsupportedContentError } from "../provider-errors.js";
import { elevenLabsRequest } from "./elevenlabs-request.js";
import { createElevenLabsVoices } from "./elevenlabs-voices.js";

/** The playback rates ElevenLabs' voice_settings.speed takes. */
export const ELEVENLABS_SPEED = { min: 0.7, max: 1.2 } as const;

export interface ElevenLabsOutput {
  /** The `output_format` asked for. */
  outputFormat: string;
  /** What the answer's bytes are. */
  format: SpeechFormat;
  sampleRate?: number;
}

export function elevenLabsOutputFormat(format: SpeechFormat): ElevenLabsOutput {
  if (format === "pcm") return { outputFormat: `pcm_${PCM_SAMPLE_RATE}`, format: "pcm", sampleRate: PCM_SAMPLE_RATE };
  if (format === "wav") return { outputFormat: "wav_44100", format: "wav" };
  return { outputFormat: "mp3_44100_128", format: "mp3" };
}

export function createElevenLabsSpeech(context: ProviderContext): SpeechCapability {
  const vendor = elevenLabsRequest(context);
  const voices = createElevenLabsVoices(context, vendor);

  return {
    async synthesize(speech, { signal }) {
      if (speech.speed < ELEVENLABS_SPEED.min || speech.speed > ELEVENLABS_SPEED.max) {
        throw new UnsupportedContentError(`ElevenLabs speaks at speeds from ${ELEVENLABS_SPEED.min} to ${ELEVENLABS_SPEED.max}; not ${speech.speed}.`, "speed");
      }
      const output = elevenLabsOutputFormat(speech.format);
      const response = await vendor.send({
        path: `/v1/text-to-speech/${encodeURIComponent(speech.voice)}?output_format=${output.outputFormat}`,
        json: { text: speech.input, model_id: speech.model, voice_settings: { speed: speech.speed } },
        answer: "audio",
        signal,
      });
      const audio: SpeechAudio = { bytes: requireAudio(context.name, await vendor.readBytes(response, signal), response), format: output.format };
      if (output.sampleRate !== undefined) audio.sampleRate = output.sampleRate;
      const upstreamRequestId = vendor.requestId(response);
      if (upstreamRequestId) audio.upstreamRequestId = upstreamRequestId;
      return audio;
    },

    // An account's voices speak with every model, so the list is the same for each.
    voices(_model, { signal }) {
      return voices(signal);
    },
  };
}
