// The audio tools of the MCP server: each takes the HTTP endpoint's fields and goes through the
// same parser and service, so allowlists, catalog caps, credits and the library are those of
// HTTP. Speech comes back as MCP audio content (base64 + mimeType) beside structured content with
// the asset id; a transcript as text, with the JSON formats' fields as structured content.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { SPEECH_FORMATS, TRANSCRIPT_FORMATS } from "../../config/audio-catalog-schema.js";
import { parseSpeechRequest } from "../../gateway/audio/speech-request.js";
import { parseTranscriptionJson, parseTranscriptionOfBytes, type TranscriptionBody } from "../../gateway/audio/transcription-request.js";
import { AssetNotFoundError } from "../../gateway/errors.js";
import { isFileId } from "../../gateway/storage/stored-file.js";
import type { McpToolContext } from "./mcp-context.js";
import { jsonToolResult } from "./tool-results.js";

const segmentSchema = z.object({ id: z.number(), start: z.number(), end: z.number(), text: z.string(), speaker: z.number().optional() });

export function registerAudioTools(server: McpServer, context: McpToolContext): void {
  server.registerTool(
    "audio_transcribe",
    {
      title: "Transcribe audio",
      description:
        "Turn speech into text. `audio`: an http(s) URL, a data: URL, base64 bytes or a library asset id. srt and vtt come back as subtitle text; verbose_json adds timed segments (with speakers where the provider labels them).",
      inputSchema: {
        audio: z.string().describe("an http(s) URL, a data: URL, base64 bytes or a library asset_id"),
        response_format: z.enum(TRANSCRIPT_FORMATS).optional().describe("json (default), text, verbose_json, srt or vtt"),
        language: z.string().optional().describe("a language hint such as en"),
        model: z.string().optional().describe("a transcription model from GET /v1/public/audio-models"),
      },
      outputSchema: {
        model: z.string(),
        response_format: z.string(),
        text: z.string().describe("the transcript"),
        language: z.string().optional(),
        duration: z.number().optional(),
        segments: z.array(segmentSchema).optional(),
        subtitles: z.string().optional().describe("the srt or vtt body"),
      },
    },
    ({ audio, ...fields }) =>
      context.run(async (call) => {
        const source = audio.trim();
        let body: TranscriptionBody;
        if (isFileId(source)) {
          const found = await context.gateway.storage.readFileBytes(call.caller.agent.id, source);
          if (!found) throw new AssetNotFoundError("audio");
          body = parseTranscriptionOfBytes(fields, { bytes: found.bytes, filename: found.file.filename, mediaType: found.file.contentType });
        } else {
          body = parseTranscriptionJson({ ...fields, ...(/^https?:/i.test(source) ? { mediaUrl: source } : { mediaBase64: source }) });
        }
        const outcome = await context.gateway.transcription.transcribe(body, call);
        const format = body.response_format;
        const rendered = outcome.rendered;
        if (rendered.kind === "json") return jsonToolResult({ ...rendered.body, response_format: format }, outcome.text);
        const structured: Record<string, unknown> = { model: outcome.model, response_format: format, text: outcome.text };
        if (format !== "text") structured.subtitles = rendered.body;
        return jsonToolResult(structured, rendered.body);
      }),
  );

  server.registerTool(
    "audio_speak",
    {
      title: "Synthesize speech",
      description: "Speak a text aloud. The audio comes back as audio content and is saved in your library (asset_id in the structured result).",
      inputSchema: {
        input: z.string().describe("the text to speak (the model's character cap is in GET /v1/public/audio-models)"),
        voice: z.string().optional().describe("a voice id from GET /v1/audio/voices; omitted: the model's default"),
        format: z.enum(SPEECH_FORMATS).optional().describe("mp3 (default), wav, opus, flac or pcm"),
        speed: z.number().optional().describe("0.25 to 4 (the model's range may be narrower)"),
        model: z.string().optional().describe("a speech model from GET /v1/public/audio-models"),
        project_id: z.string().optional(),
      },
      outputSchema: {
        model: z.string(),
        voice: z.string(),
        format: z.string(),
        characters: z.number(),
        duration_ms: z.number(),
        asset_id: z.string().optional().describe("library id of the stored audio"),
        asset_warning: z.string().optional(),
        upstream_trace_id: z.string().optional(),
      },
    },
    (args) =>
      context.run(async (call) => {
        const outcome = await context.gateway.speech.synthesize(parseSpeechRequest(args), call);
        const structured: Record<string, unknown> = {
          model: outcome.model,
          voice: outcome.voice,
          format: outcome.format,
          characters: outcome.characters,
          duration_ms: outcome.durationMs,
        };
        if (outcome.assetId) structured.asset_id = outcome.assetId;
        if (outcome.assetWarning) structured.asset_warning = outcome.assetWarning;
        if (outcome.upstreamRequestId) structured.upstream_trace_id = outcome.upstreamRequestId;
        return {
          content: [
            { type: "audio" as const, data: outcome.audio.toString("base64"), mimeType: outcome.contentType },
            { type: "text" as const, text: JSON.stringify(structured) },
          ],
          structuredContent: structured,
        };
      }),
  );
}
