// Transcription against Deepgram's pre-recorded API: the audio's bytes as the body, every option a
// query parameter. Speakers and utterances are always asked for (no extra cost), so a transcript
// that needs segments never needs a second call.

import type { TranscriptionCapability, TranscriptionRequest } from "../audio-types.js";
import type { ProviderContext } from "../provider.js";
import { convertFromDeepgramTranscript } from "./convert-from-deepgram-transcript.js";
import { deepgramRequest } from "./deepgram-request.js";

export function createDeepgramTranscription(context: ProviderContext): TranscriptionCapability {
  const vendor = deepgramRequest(context);

  return {
    async transcribe(request, { signal }) {
      const bytes = { body: request.audio.bytes, contentType: request.audio.mediaType };
      const response = await vendor.send({ path: `/v1/listen?${deepgramQuery(request)}`, bytes, answer: "audio", signal });
      const transcript = convertFromDeepgramTranscript(context.name, await vendor.readJson(response, signal), request);
      // The body's metadata.request_id, else the same id from the response's header.
      const requestId = transcript.upstreamRequestId ?? vendor.requestId(response);
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
