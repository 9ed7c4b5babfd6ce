// Transcription against Deepgram's pre-recorded API: the audio's bytes as the body, every option a
// query parameter. Speakers and utterances are always asked for (no extra cost), so a transcript
// that needs segments never needs a second call.

import { type UpstreamResponse, upstreamRequestIdOf, upstreamTarget } from "../../net/upstream-http.js";
import type { TranscriptionCapability, TranscriptionRequest } from "../audio-types.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamHttpError } from "../provider-errors.js";
import { readRedactedJson } from "../sse.js";
import { convertFromDeepgramTranscript } from "./convert-from-deepgram-transcript.js";
import { fromDeepgramHttpError } from "./deepgram-error.js";

export function createDeepgramTranscription(context: ProviderContext): TranscriptionCapability {
  // The API origin; a base URL ending in /v1 works too.
  const baseUrl = (context.config.baseUrl ?? "https://api.deepgram.com").replace(/\/+$/, "").replace(/\/v1$/, "");
  const listen = upstreamTarget(`${baseUrl}/v1/listen`);
  const headers: Record<string, string> = { ...context.config.headers };
  if (context.config.apiKey) headers.authorization = `Token ${context.config.apiKey}`;

  return {
    async transcribe(request, { signal }) {
      const target = { origin: listen.origin, path: `${listen.path}?${deepgramQuery(request)}` };
      let response: UpstreamResponse;
      try {
        response = await context.http.send(
          {
            provider: context.name,
            target,
            headers: { ...headers, "content-type": request.audio.mediaType },
            body: request.audio.bytes,
            signal,
            answer: "audio",
            redact: context.redact,
          },
          context.upstream,
        );
      } catch (error) {
        throw error instanceof UpstreamHttpError ? fromDeepgramHttpError(error) : error;
      }
      const transcript = convertFromDeepgramTranscript(context.name, await readRedactedJson(context, response, signal), request);
      // The body's metadata.request_id, else the same id from the response's header.
      const requestId = transcript.upstreamRequestId ?? upstreamRequestIdOf(response.headers, "dg-request-id", context.redact);
      if (requestId) transcript.upstreamRequestId = requestId;
      return transcript;
    },
  };
}

export function deepgramQuery(request: Pick<TranscriptionRequest, "model" | "language">): string {
  const query = new URLSearchParams({ model: request.model, smart_format: "true", punctuate: "true", diarize: "true", utterances: "true" });
  if (request.language !== undefined) query.set("language", request.language);
  else query.set("detect_language", "true");
  return query.toString();
}
