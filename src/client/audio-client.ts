// The audio endpoints for the client (transcription, speech, voices, the audio catalog), on
// GwClient's transport; `client.audio` is one built with the client's key.
// - A transcription's audio goes as multipart/form-data, streamed as it is read (a file from disk
//   through undici's request() on the upload connections, as `gw storage upload` does: fetch would
//   hold the whole body in memory), or as JSON naming a URL or carrying base64.
// - The answer is kept as sent (text, srt and vtt are the transcript itself) and decoded when JSON.
// - Speech answers bytes; its metadata travels in X-Service-* headers, read into SpeechResult.
import { Readable } from "node:stream";
import { hasControlCharacter } from "../text/control-characters.js";
import { answerShape, expectAnswer, hasList, hasString } from "./answer-shape.js";
import type {
  AudioCatalogBody,
  SpeechFormat,
  SpeechRequest,
  SpeechResult,
  TranscriptionBody,
  TranscriptionJsonRequest,
  TranscriptionParams,
  TranscriptionResult,
  VerboseTranscriptionBody,
  VoiceListBody,
} from "./audio-types.js";
import { errorFromBody, GwApiError } from "./gw-api-error.js";
import type { HttpTransport } from "./http-transport.js";
import { multipartUpload } from "./multipart-upload.js";
import type { UploadSource } from "./storage-types.js";
import { uploadRequest } from "./upload-connections.js";

export interface AudioCallOptions {
  signal?: AbortSignal;
}

/**
 * The audio to transcribe: a file whose bytes are read as they are sent (UploadSource), bytes in
 * memory (stdin), both sent as the multipart part `file`; or a URL the gateway downloads, or
 * base64 (a data: URL or bare), sent as JSON.
 */
export type TranscriptionAudio =
  | { file: UploadSource }
  | { bytes: Uint8Array; filename?: string; contentType?: string }
  | { mediaUrl: string }
  | { mediaBase64: string };

export const AUDIO_HEADERS = {
  characters: "x-service-audio-characters",
  format: "x-service-audio-format",
  durationMs: "x-service-audio-duration-ms",
  model: "x-service-audio-model",
  voice: "x-service-audio-voice",
  upstreamTraceId: "x-service-upstream-trace-id",
  assetId: "x-service-asset-id",
  assetWarning: "x-service-asset-warning",
  requestId: "x-request-id",
} as const;

const TRANSCRIPTIONS_PATH = "/v1/audio/transcriptions";
const VOICE_LIST = answerShape("voice list", (body): body is VoiceListBody => hasList(body, "voices"));
const AUDIO_CATALOG = answerShape("audio catalog", (body): body is AudioCatalogBody => hasList(body, "speech") && hasList(body, "transcription"));
const TRANSCRIPTION = answerShape("transcription", (body): body is TranscriptionBody | VerboseTranscriptionBody => hasString(body, "text"));

export class AudioClient {
  /**
   * `apiKey`: the transport's key again, for streamed uploads, which go around fetch (the
   * transport keeps its key to itself). GwClient passes it; without it a multipart
   * transcription is refused as the transport refuses any call without a key.
   */
  constructor(
    private readonly transport: HttpTransport,
    private readonly options: { apiKey?: string } = {},
  ) {}

  /** POST /v1/audio/transcriptions. */
  async transcribe(audio: TranscriptionAudio, params: TranscriptionParams = {}, options: AudioCallOptions = {}): Promise<TranscriptionResult> {
    if ("mediaUrl" in audio || "mediaBase64" in audio) {
      const body: TranscriptionJsonRequest = { ...definedParams(params), ...audio };
      const response = await this.transport.request(TRANSCRIPTIONS_PATH, { json: body, signal: options.signal });
      return transcriptionResult(response.status, response.headers, await response.text());
    }
    const source: UploadSource =
      "file" in audio
        ? audio.file
        : {
            filename: audio.filename ?? "audio",
            contentType: audio.contentType ?? "application/octet-stream",
            sizeBytes: audio.bytes.length,
            open: async function* () {
              yield audio.bytes;
            },
          };
    return this.transcribeMultipart(source, params, options);
  }

  /** POST /v1/audio/speech: the audio bytes, and the metadata from the headers. */
  async speak(body: SpeechRequest, options: AudioCallOptions = {}): Promise<SpeechResult> {
    const answer = await this.transport.binary("/v1/audio/speech", { json: body, signal: options.signal, headers: { accept: "audio/*, application/json" } });
    const headers = answer.headers;
    if ((answer.contentType.split(";")[0] ?? "").trim().toLowerCase() === "application/json") {
      throw new GwApiError("unexpected speech answer from the gateway: JSON instead of audio", 200, undefined, undefined, headerText(headers, "requestId"));
    }
    const result: SpeechResult = {
      audio: answer.data,
      contentType: answer.contentType,
      format: speechFormatOf(headers.get(AUDIO_HEADERS.format), answer.contentType),
    };
    const characters = headerNumber(headers, "characters");
    if (characters !== undefined) result.characters = characters;
    const durationMs = headerNumber(headers, "durationMs");
    if (durationMs !== undefined) result.durationMs = durationMs;
    for (const name of ["model", "voice", "upstreamTraceId", "assetId", "assetWarning", "requestId"] as const) {
      const value = headerText(headers, name);
      if (value !== undefined) result[name] = value;
    }
    return result;
  }

  /** GET /v1/audio/voices (no key needed); `model` narrows it to one speech model's voices. */
  async voices(query: { model?: string } = {}, options: AudioCallOptions = {}): Promise<VoiceListBody> {
    return this.transport.json("/v1/audio/voices", VOICE_LIST, { signal: options.signal, query: { model: query.model }, auth: false });
  }

  /** GET /v1/public/audio-models (no key needed). */
  async audioCatalog(options: AudioCallOptions = {}): Promise<AudioCatalogBody> {
    return this.transport.json("/v1/public/audio-models", AUDIO_CATALOG, { signal: options.signal, auth: false });
  }

  /** The fields, then the file part last, streamed from `source.open()` with a known length. */
  private async transcribeMultipart(source: UploadSource, params: TranscriptionParams, options: AudioCallOptions): Promise<TranscriptionResult> {
    if (hasControlCharacter(source.contentType)) throw new GwApiError(`invalid Content-Type ${JSON.stringify(source.contentType)}`, 0);
    if (!this.options.apiKey) throw new GwApiError("no API key given", 0);
    const upload = multipartUpload(source, formFields(params));
    const url = `${this.transport.baseUrl}${TRANSCRIPTIONS_PATH}`;
    let answer: Awaited<ReturnType<typeof uploadRequest>>;
    try {
      answer = await uploadRequest(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${this.options.apiKey}`,
          "content-type": upload.contentType,
          "content-length": String(upload.contentLength),
        },
        body: Readable.from(upload.body, { objectMode: false }),
        signal: options.signal,
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new GwApiError(this.transport.unreachable(this.transport.baseUrl, error), 0);
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const text = await answer.body.text();
    if (answer.statusCode < 200 || answer.statusCode > 299) throw errorOf(answer.statusCode, headers, text);
    return transcriptionResult(answer.statusCode, headers, text);
  }
}

/** The params that are set: an explicit undefined is left out rather than sent. */
function definedParams(params: TranscriptionParams): TranscriptionParams {
  return Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined)) as TranscriptionParams;
}

/** The params as multipart text fields; each timestamp granularity its own `timestamp_granularities[]` field, as OpenAI's form takes them. */
function formFields(params: TranscriptionParams): Array<[string, string]> {
  const fields: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(definedParams(params))) {
    if (Array.isArray(value)) for (const item of value) fields.push([`${name}[]`, String(item)]);
    else fields.push([name, String(value)]);
  }
  return fields;
}

function transcriptionResult(status: number, headers: Headers, raw: string): TranscriptionResult {
  const contentType = headers.get("content-type") ?? "text/plain";
  const requestId = headers.get(AUDIO_HEADERS.requestId) ?? undefined;
  const result: TranscriptionResult = { raw, contentType };
  if (requestId !== undefined) result.requestId = requestId;
  const durationMs = headerNumber(headers, "durationMs");
  if (durationMs !== undefined) result.audioDurationMs = durationMs;
  if (/^application\/([a-z.+-]*\+)?json\b/i.test(contentType.trim())) {
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      throw new GwApiError(`the gateway answered with a body that is not JSON: ${raw.slice(0, 200)}`, status, undefined, undefined, requestId);
    }
    result.json = expectAnswer(body, TRANSCRIPTION);
  }
  return result;
}

/** The gateway's error body as GwApiError (the transport's own decoding, for the undici path). */
function errorOf(status: number, headers: Headers, text: string): GwApiError {
  const requestId = headers.get(AUDIO_HEADERS.requestId) ?? undefined;
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page, an empty body): the status and what was sent.
  }
  const detail = text.trim() ? `: ${text.trim().slice(0, 200)}` : "";
  const error = errorFromBody(body, status, requestId) ?? new GwApiError(`HTTP ${status}${detail}`, status, undefined, undefined, requestId, body);
  const retryAfter = Number(headers.get("retry-after"));
  if (headers.has("retry-after") && Number.isFinite(retryAfter) && retryAfter >= 0) error.retryAfterSeconds = retryAfter;
  return error;
}

const FORMAT_BY_MEDIA_TYPE: Record<string, SpeechFormat> = {
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
  "audio/wav": "wav",
  "audio/wave": "wav",
  "audio/x-wav": "wav",
  "audio/ogg": "opus",
  "audio/opus": "opus",
  "audio/flac": "flac",
  "audio/x-flac": "flac",
  "audio/l16": "pcm",
  "audio/pcm": "pcm",
};

/** The format the gateway declared, else the one its Content-Type names. */
export function speechFormatOf(declared: string | null, contentType: string): SpeechFormat | undefined {
  const named = declared?.trim().toLowerCase();
  if (named && Object.values(FORMAT_BY_MEDIA_TYPE).includes(named as SpeechFormat)) return named as SpeechFormat;
  return FORMAT_BY_MEDIA_TYPE[(contentType.split(";")[0] ?? "").trim().toLowerCase()];
}

function headerText(headers: Headers, name: keyof typeof AUDIO_HEADERS): string | undefined {
  const value = headers.get(AUDIO_HEADERS[name])?.trim();
  return value ? value : undefined;
}

function headerNumber(headers: Headers, name: keyof typeof AUDIO_HEADERS): number | undefined {
  const text = headerText(headers, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}
