// Shapes of the audio endpoints as the client sends and reads them (transcriptions, speech, the
// public audio catalog and voices), derived from the gateway's request schemas
// (`z.input`) and answer types (type imports only: erased, so the client never loads the gateway;
// docs/decisions.md §1). A server change the client does not follow fails tsc.
import type { z } from "zod";
import type { PublicAudioCatalog } from "../gateway/audio/audio-catalog.js";
import type { SpeechBody, speechRequestSchema } from "../gateway/audio/speech-request.js";
import type { TranscriptSegmentBody as ServerSegment, TranscriptionJson, TranscriptionVerboseJson } from "../gateway/audio/transcript-render.js";
import type {
  TranscriptionBody as ServerTranscriptionRequest,
  transcriptionFieldsSchema,
  transcriptionJsonSchema,
} from "../gateway/audio/transcription-request.js";
import type { VoiceEntry as ServerVoiceEntry } from "../gateway/audio/voice-catalog.js";

/** The formats the speech endpoints answer in; `pcm` is raw 16-bit little-endian mono samples. */
export type SpeechFormat = SpeechBody["format"];

/** What POST /v1/audio/transcriptions answers in: json and verbose_json are JSON, the rest text. */
export type TranscriptFormat = ServerTranscriptionRequest["response_format"];

// Values, so kept here rather than imported (the client never loads the gateway); the
// `satisfies` checks keep them within the server's types.
export const SPEECH_FORMATS = ["mp3", "wav", "opus", "flac", "pcm"] as const satisfies readonly SpeechFormat[];
export const TRANSCRIPT_FORMATS = ["json", "text", "verbose_json", "srt", "vtt"] as const satisfies readonly TranscriptFormat[];

/**
 * The schema's input with these fields as numbers: the server's schema takes any value there (to
 * refuse a non-number naming the allowed range, or to read a multipart field's text), and what a
 * client means to send is a number.
 */
type WithNumbers<Input, Fields extends keyof Input> = Omit<Input, Fields> & { [Field in Fields]?: number };

/**
 * The fields of a transcription request other than the audio itself: model, language,
 * response_format, and OpenAI's prompt, temperature and timestamp_granularities (accepted so that
 * code written for OpenAI works unchanged; gw renders every format from the segments).
 */
export type TranscriptionParams = WithNumbers<z.input<typeof transcriptionFieldsSchema>, "temperature">;

/** The JSON form of POST /v1/audio/transcriptions: exactly one of mediaUrl (downloaded by the gateway) and mediaBase64 (or a data: URL). */
export type TranscriptionJsonRequest = WithNumbers<z.input<typeof transcriptionJsonSchema>, "temperature">;

/** `response_format: json` (the default). */
export type TranscriptionBody = TranscriptionJson;

export type TranscriptSegmentBody = ServerSegment;

/** `response_format: verbose_json`. */
export type VerboseTranscriptionBody = TranscriptionVerboseJson;

/** What a transcription answered: the body as sent, and decoded when it is JSON. */
export interface TranscriptionResult {
  /** The response body exactly as the gateway sent it (the transcript itself for text, srt and vtt). */
  raw: string;
  contentType: string;
  /** The decoded body for json and verbose_json; undefined for text, srt and vtt. */
  json?: TranscriptionBody | VerboseTranscriptionBody;
  /** X-Service-Audio-Duration-Ms: the audio's length as the gateway measured it. */
  audioDurationMs?: number;
  requestId?: string;
}

/**
 * POST /v1/audio/speech (and /v1/audio/synthesize): `input`, and optionally voice, format (mp3
 * when left out; `response_format` is an alias), speed, model, project_id, and OpenAI's
 * instructions and stream_format (accepted, not used).
 */
export type SpeechRequest = WithNumbers<z.input<typeof speechRequestSchema>, "speed">;

/** The audio bytes and the metadata the gateway sends in headers beside them. */
export interface SpeechResult {
  audio: Uint8Array;
  contentType: string;
  /** X-Service-Audio-Format, else what the Content-Type names. */
  format: SpeechFormat | undefined;
  /** X-Service-Audio-Model: the model that spoke. */
  model?: string;
  /** X-Service-Audio-Voice. */
  voice?: string;
  /** X-Service-Audio-Characters: what was billed. */
  characters?: number;
  /** X-Service-Audio-Duration-Ms. */
  durationMs?: number;
  /** X-Service-Upstream-Trace-Id: the vendor's request id. */
  upstreamTraceId?: string;
  /** X-Service-Asset-Id: the copy stored in the caller's library. */
  assetId?: string;
  /** X-Service-Asset-Warning: why no copy was stored (storage full). */
  assetWarning?: string;
  requestId?: string;
}

/** One voice of GET /v1/audio/voices. */
export type VoiceEntry = ServerVoiceEntry;

/** GET /v1/audio/voices. */
export interface VoiceListBody {
  voices: VoiceEntry[];
}

/** GET /v1/public/audio-models. */
export type AudioCatalogBody = PublicAudioCatalog;

export type SpeechCatalogModel = AudioCatalogBody["speech"][number];

export type TranscriptionCatalogModel = AudioCatalogBody["transcription"][number];
