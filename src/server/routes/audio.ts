// The audio endpoints: the public catalog and voices (no key), POST /v1/audio/transcriptions
// (multipart `file` or JSON `mediaUrl` / `mediaBase64`), POST /v1/audio/speech and its other name
// /v1/audio/synthesize (one operation), and the removed /v1/audio/transcribe (410 naming the new
// path). Errors render in the gateway envelope; a transcript in text, srt or vtt and speech audio
// are bodies of their own, with the metadata in headers.
import { type H3, type H3Event, HTTPResponse } from "h3";
import { parseSpeechRequest } from "../../gateway/audio/speech-request.js";
import { parseTranscriptionForm, parseTranscriptionJson } from "../../gateway/audio/transcription-request.js";
import { EndpointRemovedError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { headerSafe } from "../../text/control-characters.js";
import { readJsonObject } from "../read-json-body.js";
import { isMultipart, readMultipartForm } from "../read-multipart-form.js";
import type { RequestCharges } from "../request-charges.js";
import { nodeRequest } from "../request-context.js";
import { toolCallContext } from "./tool-call-context.js";

export function registerAudio(app: H3, gateway: Gateway, charges: RequestCharges): void {
  app.get("/v1/public/audio-models", () => gateway.audioCatalog());

  app.get("/v1/audio/voices", async (event) => {
    const model = event.url.searchParams.get("model") ?? undefined;
    return { voices: await gateway.audioVoices({ ...(model ? { model } : {}), signal: event.req.signal }) };
  });

  app.post(
    "/v1/audio/transcriptions",
    charges.counted(async (event) => {
      const context = await toolCallContext(event, gateway);
      const body = isMultipart(event.req.headers.get("content-type"))
        ? parseTranscriptionForm(await readMultipartForm(nodeRequest(event), { maxFileBytes: gateway.maxAudioUploadBytes(), maxFiles: 1 }))
        : parseTranscriptionJson(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
      const outcome = await gateway.transcription.transcribe(body, context);
      event.res.headers.set("x-service-audio-duration-ms", String(outcome.durationMs));
      if (outcome.upstreamRequestId) event.res.headers.set("x-service-upstream-trace-id", outcome.upstreamRequestId);
      const rendered = outcome.rendered;
      if (rendered.kind === "json") return rendered.body;
      return new HTTPResponse(rendered.body, { status: 200, headers: { "content-type": rendered.contentType } });
    }),
  );

  for (const path of ["/v1/audio/speech", "/v1/audio/synthesize"]) {
    app.post(
      path,
      charges.counted(async (event) => {
        const context = await toolCallContext(event, gateway);
        const body = parseSpeechRequest(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
        const outcome = await gateway.speech.synthesize(body, context);
        const headers: Record<string, string> = {
          "content-type": outcome.contentType,
          "content-length": String(outcome.audio.length),
          "x-service-audio-characters": String(outcome.characters),
          "x-service-audio-format": outcome.format,
          "x-service-audio-duration-ms": String(outcome.durationMs),
          "x-service-audio-model": outcome.model,
          "x-service-audio-voice": headerSafe(outcome.voice),
        };
        if (outcome.upstreamRequestId) headers["x-service-upstream-trace-id"] = outcome.upstreamRequestId;
        if (outcome.assetId) headers["x-service-asset-id"] = outcome.assetId;
        if (outcome.assetWarning) headers["x-service-asset-warning"] = headerSafe(outcome.assetWarning);
        return new HTTPResponse(outcome.audio as unknown as BodyInit, { status: 200, headers });
      }),
    );
  }

  app.all("/v1/audio/transcribe", (event: H3Event) => {
    throw new EndpointRemovedError(`${event.url.pathname} was removed: use POST /v1/audio/transcriptions (the same fields, and response_format).`);
  });
}
