/**
 * Fake OpenAI Audio upstream (reference audio.md §1, §2, §6), on 127.0.0.1 port 0.
 *  - POST /v1/audio/transcriptions (multipart, parsed with busboy): answers json, text, srt, vtt
 *    or verbose_json (segments; words with `timestamp_granularities[]=word`) from configurable
 *    segments. The upload must be real audio (ffprobe reads it) with a known extension; its length
 *    is the answer's `duration` unless one is configured. gpt-4o-transcribe and
 *    gpt-4o-mini-transcribe answer json and text only (400 otherwise).
 *  - POST /v1/audio/speech (JSON): validates model, input (<= 4096 characters), voice (the
 *    model's voices), response_format and speed, and answers real audio made by ffmpeg in the
 *    asked format (24 kHz; Ogg Opus at 48 kHz; pcm raw s16le mono), 0.06 s a character / speed.
 *  - Bearer key checked only when the fake is started with `apiKey` (as a self-hosted Whisper
 *    server would not); errors {error:{message,type,param,code}}; `x-request-id` on every answer.
 */
import type http from "node:http";
import { type CommonBehaviour, type Exchange, type FakeServer, interrupted, sendBytes, sendJson, startFakeServer } from "./audio-fake-server.js";
import { AUDIO_MEDIA_TYPES, type FakeAudioCodec, fakeAudio, probeAudio, speechSeconds } from "./audio-files.js";
import { type FormFile, type ParsedForm, parseMultipart } from "./multipart-form.js";
import { type AnswerPacing, PAD_MARKER, sendPaced } from "./paced-answers.js";

export interface FakeSegment {
  start: number;
  end: number;
  text: string;
}

export interface OpenAIAudioBehaviour extends CommonBehaviour {
  status?: number; // non-200: answer an OpenAI error with this status (after the request validated)
  errorBody?: unknown; // override the error body (a string is sent as it is)
  retryAfter?: string; // Retry-After on error answers
  malformed?: true | string; // 200 that is not a valid answer: a transcription without `text`, speech as JSON; a string is the body
  segments?: FakeSegment[]; // the transcription's segments (default: two sentences sharing the audio's length)
  language?: string; // verbose_json `language` (default "english")
  duration?: number; // verbose_json `duration` (default: the upload's length)
  omitSegments?: boolean; // verbose_json without `segments` (a compatible server that has none)
  pacing?: AnswerPacing; // speech: the 200 written paced (paced-answers.ts); with `padTo`, that many bytes of filler instead of the audio
}

export interface FakeOpenAIAudioOptions extends OpenAIAudioBehaviour {
  apiKey?: string; // when set, `Authorization: Bearer <apiKey>` is required (401 otherwise)
}

export interface RecordedAudioRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Transcriptions: the form's scalar fields (repeated names keep every value). */
  fields?: Record<string, string[]>;
  /** Transcriptions: the uploaded file, without its bytes. */
  file?: { field: string; filename: string; contentType: string; size: number };
  /** Speech: the parsed JSON body. */
  json?: any;
}

export type FakeOpenAIAudio = FakeServer<OpenAIAudioBehaviour, RecordedAudioRequest>;

export const TRANSCRIPTION_MODELS = [
  "whisper-1",
  "gpt-4o-transcribe",
  "gpt-4o-mini-transcribe",
  "gpt-4o-mini-transcribe-2025-12-15",
  "gpt-4o-transcribe-diarize",
  "gpt-transcribe",
];
export const SPEECH_MODELS = ["tts-1", "tts-1-hd", "gpt-4o-mini-tts", "gpt-4o-mini-tts-2025-12-15"];
export const TTS_1_VOICES = ["alloy", "ash", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer"];
export const GPT_TTS_VOICES = [...TTS_1_VOICES, "ballad", "verse", "marin", "cedar"];

const TRANSCRIPT_FORMATS = ["json", "text", "srt", "verbose_json", "vtt", "diarized_json"];
const FILE_EXTENSIONS = ["flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav", "webm"];
const SPEECH_FORMATS: Record<string, FakeAudioCodec> = { mp3: "mp3", opus: "opus", aac: "aac", flac: "flac", wav: "wav", pcm: "pcm" };
const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
const DEFAULT_SENTENCES = ["The beach was busy.", "People were swimming."];

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = "invalid_value",
    readonly type = "invalid_request_error",
  ) {
    super(message);
  }
}

export function startFakeOpenAIAudio(options: FakeOpenAIAudioOptions = {}): Promise<FakeOpenAIAudio> {
  const { apiKey, ...initial } = options;

  async function handle(exchange: Exchange<OpenAIAudioBehaviour>, requests: RecordedAudioRequest[]): Promise<void> {
    const { request, response, url, behaviour } = exchange;
    response.setHeader("x-request-id", `req_audio_${exchange.sequence}`);
    const path = url.pathname.replace(/\/+$/, "");
    const recorded: RecordedAudioRequest = { method: request.method ?? "GET", path, headers: { ...request.headers } };
    requests.push(recorded);
    if (await interrupted(exchange)) return;
    try {
      const transcription = path === "/v1/audio/transcriptions";
      if (request.method !== "POST" || (!transcription && path !== "/v1/audio/speech")) {
        throw new ApiError(404, `Invalid URL (${request.method} ${path})`, null, null);
      }
      if (apiKey !== undefined && request.headers.authorization !== `Bearer ${apiKey}`) {
        throw new ApiError(
          401,
          "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
          null,
          "invalid_api_key",
        );
      }
      const answer = transcription ? await transcribe(exchange, recorded) : await speak(exchange, recorded);
      if (behaviour.status !== undefined && behaviour.status !== 200) {
        const headers: Record<string, string> = behaviour.retryAfter === undefined ? {} : { "retry-after": behaviour.retryAfter };
        sendJson(response, behaviour.status, behaviour.errorBody ?? errorForStatus(behaviour.status), headers);
        return;
      }
      if (behaviour.malformed !== undefined) {
        sendJson(response, 200, behaviour.malformed === true ? { result: "nothing to see" } : behaviour.malformed);
        return;
      }
      if (behaviour.pacing && !transcription) {
        return sendPaced(response, answer.contentType, behaviour.pacing.padTo !== undefined ? PAD_MARKER : answer.body, behaviour.pacing);
      }
      sendBytes(response, answer.contentType, answer.body);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      sendJson(response, error.status, { error: { message: error.message, type: error.type, param: error.param, code: error.code } });
    }
  }

  return startFakeServer(initial, "/v1", handle, (response, error) =>
    sendJson(response, 500, { error: { message: `fake crashed: ${String(error)}`, type: "server_error", param: null, code: null } }),
  );
}

interface Answer {
  contentType: string;
  body: Buffer | string;
}

async function transcribe(exchange: Exchange<OpenAIAudioBehaviour>, recorded: RecordedAudioRequest): Promise<Answer> {
  const { request, body, behaviour } = exchange;
  if (!(request.headers["content-type"] ?? "").startsWith("multipart/form-data")) {
    throw new ApiError(400, "Invalid Content-Type header (expected multipart/form-data).", null, null);
  }
  const form = await parseMultipart(request.headers, body);
  recorded.fields = form.fields;
  const file = form.files.find((candidate) => candidate.field === "file");
  if (file) recorded.file = { field: file.field, filename: file.filename, contentType: file.contentType, size: file.bytes.length };
  const model = single(form, "model");
  if (!model) throw new ApiError(400, "you must provide a model parameter", "model", null);
  if (!TRANSCRIPTION_MODELS.includes(model)) throw new ApiError(400, `Invalid value for 'model': '${model}'.`, "model");
  const format = single(form, "response_format") ?? "json";
  if (!TRANSCRIPT_FORMATS.includes(format)) throw new ApiError(400, `Invalid value for 'response_format': '${format}'.`, "response_format");
  const allowed = model.includes("diarize") ? ["json", "text", "diarized_json"] : model.startsWith("gpt-") ? ["json", "text"] : TRANSCRIPT_FORMATS.slice(0, 5);
  if (!allowed.includes(format)) {
    throw new ApiError(
      400,
      `response_format '${format}' is not compatible with model '${model}'. Use ${allowed.map((name) => `'${name}'`).join(" or ")}.`,
      "response_format",
      "unsupported_value",
    );
  }
  const granularities = form.fields["timestamp_granularities[]"] ?? [];
  if (granularities.some((value) => value !== "word" && value !== "segment")) {
    throw new ApiError(400, "Invalid value for 'timestamp_granularities[]': must be 'word' or 'segment'.", "timestamp_granularities[]");
  }
  if (granularities.length > 0 && format !== "verbose_json") {
    throw new ApiError(400, "timestamp_granularities[] requires response_format 'verbose_json'.", "timestamp_granularities[]", "unsupported_value");
  }
  const language = single(form, "language");
  if (language !== undefined && !/^[a-z]{2}$/.test(language)) {
    throw new ApiError(400, `Invalid language '${language}'. Language parameter must be specified in ISO-639-1 format.`, "language");
  }
  const temperature = single(form, "temperature");
  if (temperature !== undefined && !(Number(temperature) >= 0 && Number(temperature) <= 1)) {
    throw new ApiError(400, "Invalid 'temperature': must be between 0 and 1.", "temperature");
  }
  const duration = behaviour.duration ?? (await audioLength(file));
  const segments = behaviour.segments ?? defaultSegments(duration);
  const text = segments.map((segment) => segment.text.trim()).join(" ");
  const usage = model === "whisper-1" ? { type: "duration", seconds: Math.ceil(duration) } : tokenUsage(text);
  if (format === "text") return { contentType: "text/plain; charset=utf-8", body: `${text}\n` };
  if (format === "srt") return { contentType: "text/plain; charset=utf-8", body: subtitles(segments, "srt") };
  if (format === "vtt") return { contentType: "text/vtt; charset=utf-8", body: subtitles(segments, "vtt") };
  if (format === "json") return json({ text, usage });
  if (format === "diarized_json") {
    const diarized = segments.map((segment, index) => ({ type: "transcript.text.segment", id: `seg_${index + 1}`, ...segment, speaker: "A" }));
    return json({ task: "transcribe", duration, text, segments: diarized, usage });
  }
  const verbose: Record<string, unknown> = { task: "transcribe", language: behaviour.language ?? "english", duration, text };
  if (!behaviour.omitSegments && (granularities.length === 0 || granularities.includes("segment"))) verbose.segments = segments.map(whisperSegment);
  if (granularities.includes("word")) verbose.words = segments.flatMap(wordsOf);
  verbose.usage = usage;
  return json(verbose);
}

async function speak(exchange: Exchange<OpenAIAudioBehaviour>, recorded: RecordedAudioRequest): Promise<Answer> {
  let body: any;
  try {
    body = JSON.parse(exchange.body.toString("utf8"));
  } catch {
    throw new ApiError(400, "We could not parse the JSON body of your request.", null, null);
  }
  recorded.json = body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ApiError(400, "The body must be a JSON object.", null, null);
  const { model, input, voice } = body;
  if (typeof model !== "string") throw new ApiError(400, "Missing required parameter: 'model'.", "model", "missing_required_parameter");
  if (!SPEECH_MODELS.includes(model)) throw new ApiError(400, `Invalid value for 'model': '${model}'.`, "model");
  if (typeof input !== "string" || input === "") throw new ApiError(400, "Missing required parameter: 'input'.", "input", "missing_required_parameter");
  if (input.length > 4096) throw new ApiError(400, "String should have at most 4096 characters", "input", "string_too_long");
  const voices = model.startsWith("tts-1") ? TTS_1_VOICES : GPT_TTS_VOICES;
  if (typeof voice !== "string" || !voices.includes(voice)) {
    throw new ApiError(400, `Invalid value for 'voice': '${String(voice)}'. Supported values are: ${voices.map((name) => `'${name}'`).join(", ")}.`, "voice");
  }
  if (body.instructions !== undefined && model.startsWith("tts-1")) {
    throw new ApiError(400, `Instructions are not supported with ${model}.`, "instructions", "unsupported_parameter");
  }
  const format = body.response_format ?? "mp3";
  const codec = SPEECH_FORMATS[format];
  if (!codec) throw new ApiError(400, `Invalid value for 'response_format': '${String(format)}'.`, "response_format");
  const speed = body.speed ?? 1;
  if (typeof speed !== "number" || speed < 0.25 || speed > 4) throw new ApiError(400, "Invalid 'speed': must be a number from 0.25 to 4.", "speed");
  const audio = await fakeAudio({ codec, durationSeconds: speechSeconds(input.length, speed), sampleRate: codec === "opus" ? 48_000 : 24_000 });
  return { contentType: AUDIO_MEDIA_TYPES[codec], body: audio };
}

function single(form: ParsedForm, name: string): string | undefined {
  return form.fields[name]?.[0];
}

/** The upload's length in seconds; not audio (or no file) is refused as OpenAI does. */
async function audioLength(file: FormFile | undefined): Promise<number> {
  if (!file) throw new ApiError(400, "Missing required parameter: 'file'.", "file", "missing_required_parameter");
  if (file.bytes.length > MAX_UPLOAD_BYTES) throw new ApiError(413, `Maximum content size limit (${MAX_UPLOAD_BYTES}) exceeded.`, "file", null);
  const extension = /\.([a-z0-9]+)$/i.exec(file.filename)?.[1]?.toLowerCase();
  if (!extension || !FILE_EXTENSIONS.includes(extension)) {
    throw new ApiError(400, `Unrecognized file format. Supported formats: [${FILE_EXTENSIONS.map((name) => `'${name}'`).join(", ")}]`, "file");
  }
  const probed = await probeAudio(file.bytes);
  if (!probed || !(probed.durationSeconds > 0)) throw new ApiError(400, "Audio file might be corrupted or unsupported", "file");
  return Math.round(probed.durationSeconds * 100) / 100;
}

function defaultSegments(duration: number): FakeSegment[] {
  const share = duration / DEFAULT_SENTENCES.length;
  return DEFAULT_SENTENCES.map((text, index) => ({ start: round(index * share), end: round((index + 1) * share), text }));
}

function whisperSegment(segment: FakeSegment, id: number): Record<string, unknown> {
  return {
    id,
    seek: 0,
    start: segment.start,
    end: segment.end,
    text: ` ${segment.text.trim()}`,
    tokens: [50364, 440, 7534, 390, 3743, 50530],
    temperature: 0,
    avg_logprob: -0.286,
    compression_ratio: 1.236,
    no_speech_prob: 0.0099,
  };
}

/** The segment's words sharing its time evenly. */
function wordsOf(segment: FakeSegment): Array<{ word: string; start: number; end: number }> {
  const words = segment.text.trim().split(/\s+/).filter(Boolean);
  const share = (segment.end - segment.start) / Math.max(1, words.length);
  return words.map((word, index) => ({
    word: word.replace(/[.,!?]$/, ""),
    start: round(segment.start + index * share),
    end: round(segment.start + (index + 1) * share),
  }));
}

function subtitles(segments: FakeSegment[], kind: "srt" | "vtt"): string {
  const cues = segments.map((segment, index) => {
    const timing = `${timestamp(segment.start, kind)} --> ${timestamp(segment.end, kind)}`;
    return kind === "srt" ? `${index + 1}\n${timing}\n${segment.text.trim()}\n` : `${timing}\n${segment.text.trim()}\n`;
  });
  return kind === "srt" ? `${cues.join("\n")}\n` : `WEBVTT\n\n${cues.join("\n")}\n`;
}

function timestamp(seconds: number, kind: "srt" | "vtt"): string {
  const milliseconds = Math.round(seconds * 1000);
  const pad = (value: number, width = 2) => String(value).padStart(width, "0");
  const clock = `${pad(Math.floor(milliseconds / 3_600_000))}:${pad(Math.floor(milliseconds / 60_000) % 60)}:${pad(Math.floor(milliseconds / 1000) % 60)}`;
  return `${clock}${kind === "srt" ? "," : "."}${pad(milliseconds % 1000, 3)}`;
}

function tokenUsage(text: string): Record<string, unknown> {
  const output = Math.ceil(text.length / 4);
  return { type: "tokens", input_tokens: 14, input_token_details: { text_tokens: 0, audio_tokens: 14 }, output_tokens: output, total_tokens: 14 + output };
}

function json(body: unknown): Answer {
  return { contentType: "application/json", body: JSON.stringify(body) };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function errorForStatus(status: number): unknown {
  if (status === 401)
    return { error: { message: "Incorrect API key provided: sk-****fake.", type: "invalid_request_error", param: null, code: "invalid_api_key" } };
  if (status === 413) return { error: { message: "Maximum content size limit (26214400) exceeded.", type: "invalid_request_error", param: null, code: null } };
  if (status === 429)
    return { error: { message: "Rate limit reached for requests per minute (fake upstream).", type: "requests", param: null, code: "rate_limit_exceeded" } };
  if (status >= 500) return { error: { message: "The server had an error while processing your request.", type: "server_error", param: null, code: null } };
  return { error: { message: `Request failed with status ${status} (fake upstream).`, type: "invalid_request_error", param: null, code: null } };
}
