// Transcription and speech against OpenAI's Audio API and every compatible server (a self-hosted
// Whisper or TTS server needs no key). Transcriptions go out as multipart forms and come back as
// JSON; speech goes out as JSON and comes back as the audio's bytes, in any of the five formats.

import { requireAudio } from "../audio-answer.js";
import { PCM_SAMPLE_RATE, type SpeechAudio, type SpeechCapability, type TranscriptionCapability } from "../audio-types.js";
import type { ProviderContext } from "../provider.js";
import { convertFromOpenAITranscription, convertToOpenAITranscription } from "./openai-audio-transcript.js";
import { openaiVoices } from "./openai-audio-voices.js";
import { openaiRequest } from "./openai-request.js";

export function createOpenAITranscription(context: ProviderContext): TranscriptionCapability {
  const vendor = openaiRequest(context);

  return {
    async transcribe(request, { signal }) {
      const response = await vendor.send({ path: "/audio/transcriptions", form: convertToOpenAITranscription(request), answer: "audio", signal });
      const transcript = convertFromOpenAITranscription(context.name, await vendor.readJson(response, signal), request.segments);
      const upstreamRequestId = vendor.requestId(response);
      return upstreamRequestId ? { ...transcript, upstreamRequestId } : transcript;
    },
  };
}

export function createOpenAISpeech(context: ProviderContext): SpeechCapability {
  const vendor = openaiRequest(context);

  return {
    async synthesize(request, { signal }) {
      // OpenAI produces every format the gateway offers, so the caller's format is asked for as it is.
      const json = { model: request.model, input: request.input, voice: request.voice, response_format: request.format, speed: request.speed };
      const response = await vendor.send({ path: "/audio/speech", json, answer: "audio", signal });
      const audio: SpeechAudio = { bytes: requireAudio(context.name, await vendor.readBytes(response, signal), response), format: request.format };
      if (request.format === "pcm") audio.sampleRate = PCM_SAMPLE_RATE;
      const upstreamRequestId = vendor.requestId(response);
      if (upstreamRequestId) audio.upstreamRequestId = upstreamRequestId;
      return audio;
    },

    async voices(model) {
      return openaiVoices(model);
    },
  };
}
