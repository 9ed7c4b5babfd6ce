// Transcription and speech against OpenAI's Audio API and every compatible server (a self-hosted
// Whisper or TTS server needs no key). Transcriptions go out as multipart forms and come back as
// JSON; speech goes out as JSON and comes back as the audio's bytes, in any of the five formats.

import { toNetworkError, type UpstreamResponse, upstreamRequestIdOf, upstreamTarget } from "../../net/upstream-http.js";
import { PCM_SAMPLE_RATE, type SpeechAudio, type SpeechCapability, type TranscriptionCapability } from "../audio-types.js";
import { bareMediaType } from "../image-bytes.js";
import { encodeMultipart } from "../multipart-body.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamHttpError, UpstreamNetworkError } from "../provider-errors.js";
import { readRedactedJson } from "../sse.js";
import { convertFromOpenAITranscription, convertToOpenAITranscription } from "./openai-audio-transcript.js";
import { openaiVoices } from "./openai-audio-voices.js";
import { fromOpenAIHttpError } from "./openai-error.js";

export function createOpenAITranscription(context: ProviderContext): TranscriptionCapability {
  const target = upstreamTarget(`${baseUrlOf(context)}/audio/transcriptions`);
  const headers = headersOf(context);

  return {
    async transcribe(request, { signal }) {
      const form = encodeMultipart(convertToOpenAITranscription(request));
      const response = await send(context, { target, headers: { ...headers, "content-type": form.contentType }, body: form.body, signal });
      const transcript = convertFromOpenAITranscription(context.name, await readRedactedJson(context, response, signal), request.segments);
      const upstreamRequestId = upstreamRequestIdOf(response.headers, "x-request-id", context.redact);
      return upstreamRequestId ? { ...transcript, upstreamRequestId } : transcript;
    },
  };
}

export function createOpenAISpeech(context: ProviderContext): SpeechCapability {
  const target = upstreamTarget(`${baseUrlOf(context)}/audio/speech`);
  const headers = { ...headersOf(context), "content-type": "application/json" };

  return {
    async synthesize(request, { signal }) {
      // OpenAI produces every format the gateway offers, so the caller's format is asked for as it is.
      const body = JSON.stringify({ model: request.model, input: request.input, voice: request.voice, response_format: request.format, speed: request.speed });
      const response = await send(context, { target, headers, body, signal });
      const audio: SpeechAudio = { bytes: await readAudio(context.name, response, signal), format: request.format };
      if (request.format === "pcm") audio.sampleRate = PCM_SAMPLE_RATE;
      const upstreamRequestId = upstreamRequestIdOf(response.headers, "x-request-id", context.redact);
      if (upstreamRequestId) audio.upstreamRequestId = upstreamRequestId;
      return audio;
    },

    async voices(model) {
      return openaiVoices(model);
    },
  };
}

/** The configured base URL includes /v1, as for chat and images. */
function baseUrlOf(context: ProviderContext): string {
  return (context.config.baseUrl ?? "https://api.openai.com/v1").replace(/\/+$/, "");
}

function headersOf(context: ProviderContext): Record<string, string> {
  const headers: Record<string, string> = { ...context.config.headers };
  if (context.config.apiKey) headers.authorization = `Bearer ${context.config.apiKey}`;
  return headers;
}

interface Call {
  target: ReturnType<typeof upstreamTarget>;
  headers: Record<string, string>;
  body: string | Buffer;
  signal: AbortSignal;
}

async function send(context: ProviderContext, call: Call): Promise<UpstreamResponse> {
  try {
    return await context.http.send({ provider: context.name, ...call, answer: "audio", redact: context.redact }, context.upstream);
  } catch (error) {
    throw error instanceof UpstreamHttpError ? fromOpenAIHttpError(error) : error;
  }
}

/** A 200 that holds no audio (empty, or a JSON body from a proxy) is the upstream's fault. */
async function readAudio(provider: string, response: UpstreamResponse, signal: AbortSignal): Promise<Buffer> {
  let bytes: Buffer;
  try {
    bytes = await response.body.bytes();
  } catch (error) {
    throw toNetworkError(provider, error, signal);
  }
  if (bytes.length === 0) throw new UpstreamNetworkError(provider, "invalid_response", "the answer holds no audio");
  if (bareMediaType(response.headers["content-type"]) === "application/json") {
    throw new UpstreamNetworkError(provider, "invalid_response", "the answer is JSON, not audio");
  }
  return bytes;
}
