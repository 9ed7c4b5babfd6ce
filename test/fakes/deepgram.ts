/**
 * Fake Deepgram pre-recorded API (reference audio.md §3), on 127.0.0.1 port 0.
 *  - POST /v1/listen with `Authorization: Token <key>` and the audio's bytes (an audio/* or
 *    video/* content type); the bytes must be real audio (ffprobe reads them), else 400 "corrupt
 *    or unsupported data". Options are query parameters (booleans `true` / `false`).
 *  - Answers {metadata, results} from configurable words: `transcript` joins them (punctuated
 *    with punctuate or smart_format), words carry `speaker` only with diarize=true,
 *    `utterances` (split at a speaker change or a pause over 0.8 s) only with utterances=true,
 *    `detected_language` only with detect_language=true; metadata.duration is the audio's length.
 *  - Errors in either of Deepgram's shapes: {err_code, err_msg, request_id} (default) or
 *    {category, message, details, request_id}; `dg-request-id` on every answer.
 */
import { randomUUID } from "node:crypto";
import type http from "node:http";
import { type CommonBehaviour, type Exchange, type FakeServer, interrupted, queryOf, sendJson, startFakeServer } from "./audio-fake-server.js";
import { probeAudio } from "./audio-files.js";

export interface DeepgramWordInput {
  word: string;
  start: number;
  end: number;
  /** Deepgram's label (0, 1 ...); sent only with diarize=true. */
  speaker?: number;
  /** The word as smart_format / punctuate writes it (default: the word itself). */
  punctuated_word?: string;
}

export interface DeepgramBehaviour extends CommonBehaviour {
  status?: number; // non-200: answer a Deepgram error with this status (after the request validated)
  errorShape?: "err_code" | "category"; // which of Deepgram's error shapes (default err_code)
  errorBody?: unknown; // override the error body (a string is sent as it is)
  retryAfter?: string; // Retry-After on error answers
  malformed?: true | string; // 200 without results (a string is the body as it is)
  words?: DeepgramWordInput[]; // the words heard (default DEEPGRAM_WORDS: two speakers)
  omitUtterances?: boolean; // no `utterances` even when asked for
  detectedLanguage?: string; // with detect_language=true (default "en")
  duration?: number; // metadata.duration (default: the audio's length)
  requestId?: string; // metadata.request_id (default a new UUID)
}

export interface FakeDeepgramOptions extends DeepgramBehaviour {
  apiKey?: string; // when set, `Authorization: Token <apiKey>` is required; otherwise any Token
}

export interface RecordedDeepgramRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The query parameters (one value per name). */
  query: Record<string, string>;
  contentType: string;
  /** The body's length in bytes. */
  bodyBytes: number;
}

export type FakeDeepgram = FakeServer<DeepgramBehaviour, RecordedDeepgramRequest>;

/** Two speakers, two sentences each side of a pause: "Hello there, how are you? I am fine, thanks." */
export const DEEPGRAM_WORDS: DeepgramWordInput[] = [
  { word: "hello", punctuated_word: "Hello", start: 0.08, end: 0.4, speaker: 0 },
  { word: "there", punctuated_word: "there,", start: 0.44, end: 0.7, speaker: 0 },
  { word: "how", punctuated_word: "how", start: 0.8, end: 0.96, speaker: 0 },
  { word: "are", punctuated_word: "are", start: 0.98, end: 1.1, speaker: 0 },
  { word: "you", punctuated_word: "you?", start: 1.12, end: 1.4, speaker: 0 },
  { word: "i", punctuated_word: "I", start: 2.6, end: 2.7, speaker: 1 },
  { word: "am", punctuated_word: "am", start: 2.72, end: 2.9, speaker: 1 },
  { word: "fine", punctuated_word: "fine,", start: 2.92, end: 3.2, speaker: 1 },
  { word: "thanks", punctuated_word: "thanks.", start: 3.24, end: 3.6, speaker: 1 },
];

const BOOLEAN_PARAMS = ["punctuate", "smart_format", "diarize", "utterances", "detect_language", "paragraphs", "profanity_filter", "numerals"];
const MODEL = /^(nova-3|nova-2|nova|enhanced|base|whisper)(-[a-z0-9]+)*$/;
/** Deepgram's default utterance split (`utt_split`). */
const UTTERANCE_PAUSE_SECONDS = 0.8;

class DeepgramError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The newer shape's `details`. */
    readonly details = "",
  ) {
    super(message);
  }
}

export function startFakeDeepgram(options: FakeDeepgramOptions = {}): Promise<FakeDeepgram> {
  const { apiKey, ...initial } = options;

  async function handle(exchange: Exchange<DeepgramBehaviour>, requests: RecordedDeepgramRequest[]): Promise<void> {
    const { request, response, url, body, behaviour } = exchange;
    const requestId = behaviour.requestId ?? randomUUID();
    response.setHeader("dg-request-id", requestId);
    const path = url.pathname.replace(/\/+$/, "");
    const query = queryOf(url);
    const contentType = request.headers["content-type"] ?? "";
    requests.push({ method: request.method ?? "GET", path, headers: { ...request.headers }, query, contentType, bodyBytes: body.length });
    if (await interrupted(exchange)) return;
    try {
      if (request.method !== "POST" || path !== "/v1/listen") throw new DeepgramError(404, "NOT_FOUND", `${request.method} ${path}: no such endpoint`);
      const token = /^Token (\S+)$/.exec(request.headers.authorization ?? "")?.[1];
      if (!token || (apiKey !== undefined && token !== apiKey)) throw errorForStatus(401);
      const answer = await listen(behaviour, query, contentType, body, requestId);
      if (behaviour.status !== undefined && behaviour.status !== 200) {
        const headers: Record<string, string> = behaviour.retryAfter === undefined ? {} : { "retry-after": behaviour.retryAfter };
        const error = errorForStatus(behaviour.status);
        sendJson(response, behaviour.status, behaviour.errorBody ?? errorBody(error, behaviour.errorShape, requestId), headers);
        return;
      }
      if (behaviour.malformed !== undefined) {
        sendJson(response, 200, behaviour.malformed === true ? { metadata: { request_id: requestId } } : behaviour.malformed);
        return;
      }
      sendJson(response, 200, answer);
    } catch (error) {
      if (!(error instanceof DeepgramError)) throw error;
      sendJson(response, error.status, errorBody(error, behaviour.errorShape, requestId));
    }
  }

  return startFakeServer(initial, "", handle, (response, error) =>
    sendJson(response, 500, { err_code: "INTERNAL_SERVER_ERROR", err_msg: `fake crashed: ${String(error)}`, request_id: randomUUID() }),
  );
}

async function listen(behaviour: DeepgramBehaviour, query: Record<string, string>, contentType: string, body: Buffer, requestId: string): Promise<unknown> {
  for (const name of BOOLEAN_PARAMS) {
    if (query[name] !== undefined && query[name] !== "true" && query[name] !== "false") {
      throw new DeepgramError(400, "Bad Request", `Invalid value for ${name}: expected true or false.`);
    }
  }
  const model = query.model ?? "base";
  if (!MODEL.test(model)) throw new DeepgramError(400, "Bad Request", "No such model/language/tier combination found.");
  if (query.language !== undefined && !/^[a-z]{2,3}(-[A-Za-z]{2,4})?$/.test(query.language)) {
    throw new DeepgramError(400, "Bad Request", "No such model/language/tier combination found.");
  }
  if (contentType.startsWith("application/json")) throw new DeepgramError(400, "Bad Request", "The fake takes audio bytes only, not a URL.");
  const probed = body.length > 0 && /^(audio|video)\/|^application\/octet-stream/.test(contentType) ? await probeAudio(body) : undefined;
  if (!probed) throw new DeepgramError(400, "Bad Request", "Bad Request: failed to process audio: corrupt or unsupported data");
  const on = (name: string) => query[name] === "true";
  const punctuated = on("punctuate") || on("smart_format");
  const words = (behaviour.words ?? DEEPGRAM_WORDS).map((word) => {
    const item: Record<string, unknown> = { word: word.word, start: word.start, end: word.end, confidence: 0.98 };
    if (punctuated) item.punctuated_word = word.punctuated_word ?? word.word;
    if (on("diarize") && word.speaker !== undefined) Object.assign(item, { speaker: word.speaker, speaker_confidence: 0.8 });
    return item;
  });
  const textOf = (items: Record<string, unknown>[]) => items.map((word) => String(word.punctuated_word ?? word.word)).join(" ");
  const channel: Record<string, unknown> = { alternatives: [{ transcript: textOf(words), confidence: 0.97, words }] };
  if (on("detect_language")) Object.assign(channel, { detected_language: behaviour.detectedLanguage ?? "en", language_confidence: 0.99 });
  const results: Record<string, unknown> = { channels: [channel] };
  if (on("utterances") && !behaviour.omitUtterances) {
    results.utterances = utterancesOf(words).map((group) => {
      const utterance: Record<string, unknown> = {
        id: randomUUID(),
        start: group[0]!.start,
        end: group.at(-1)!.end,
        confidence: 0.97,
        channel: 0,
        transcript: textOf(group),
        words: group,
      };
      if (group[0]!.speaker !== undefined) utterance.speaker = group[0]!.speaker;
      return utterance;
    });
  }
  const modelId = randomUUID();
  return {
    metadata: {
      transaction_key: "deprecated",
      request_id: requestId,
      sha256: "0".repeat(64),
      created: new Date().toISOString(),
      duration: behaviour.duration ?? Math.round(probed.durationSeconds * 1000) / 1000,
      channels: 1,
      models: [modelId],
      model_info: { [modelId]: { name: `general-${model}`, version: "2025-01-01.0", arch: model } },
    },
    results,
  };
}

function utterancesOf(words: Record<string, unknown>[]): Record<string, unknown>[][] {
  const groups: Record<string, unknown>[][] = [];
  for (const word of words) {
    const group = groups.at(-1);
    const previous = group?.at(-1);
    if (group && previous && previous.speaker === word.speaker && Number(word.start) - Number(previous.end) <= UTTERANCE_PAUSE_SECONDS) group.push(word);
    else groups.push([word]);
  }
  return groups;
}

function errorForStatus(status: number): DeepgramError {
  if (status === 401) return new DeepgramError(401, "INVALID_AUTH", "Invalid credentials.", "The API key in the Authorization header was not recognised.");
  if (status === 402) return new DeepgramError(402, "ASR_PAYMENT_REQUIRED", "Project does not have enough credits for an API request.");
  if (status === 413) return new DeepgramError(413, "PAYLOAD_TOO_LARGE", "Payload exceeds the maximum allowed size.");
  if (status === 429) return new DeepgramError(429, "TOO_MANY_REQUESTS", "Too many requests. Please try again later.");
  if (status >= 500) return new DeepgramError(status, "INTERNAL_SERVER_ERROR", "An internal server error occurred. Please try again later.");
  return new DeepgramError(status, "Bad Request", `Request failed with status ${status} (fake upstream).`);
}

function errorBody(error: DeepgramError, shape: DeepgramBehaviour["errorShape"], requestId: string): unknown {
  if (shape === "category") {
    const category = error.code === "Bad Request" ? "INVALID_REQUEST" : error.code;
    return { category, message: error.message, details: error.details, request_id: requestId };
  }
  return { err_code: error.code, err_msg: error.message, request_id: requestId };
}
