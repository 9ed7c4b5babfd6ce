/**
 * Fake ElevenLabs API (reference audio.md §4), on 127.0.0.1 port 0.
 *  - POST /v1/text-to-speech/{voice_id} (and …/stream): JSON {text, model_id, voice_settings},
 *    `output_format` query (mp3_<rate>_<kbps>, pcm_<rate>, wav_<rate>, opus_48000_<kbps>,
 *    ulaw_8000, alaw_8000; default mp3_44100_128) answered with real audio made by ffmpeg,
 *    0.06 s a character / speed. Validates like the real API where it matters: `xi-api-key`,
 *    the voice (404 voice_not_found), the model and its character limit, voice_settings.speed
 *    0.7-1.2 and a missing `text` (422 in FastAPI's shape).
 *  - GET /v1/voices: {voices: [...]} from configurable voices (default ELEVENLABS_VOICES,
 *    Rachel `21m00Tcm4TlvDq8ikWAM` first).
 *  - Errors {detail: {status, message}} or FastAPI's {detail: [{loc, msg, type}]} (422);
 *    `request-id` on every answer.
 */
import type http from "node:http";
import { type CommonBehaviour, type Exchange, type FakeServer, interrupted, queryOf, sendBytes, sendJson, startFakeServer } from "./audio-fake-server.js";
import { AUDIO_MEDIA_TYPES, type FakeAudioCodec, fakeAudio, speechSeconds } from "./audio-files.js";

export interface ElevenLabsVoiceInput {
  voice_id: string;
  name: string;
  category?: string;
  labels?: Record<string, string>;
  verified_languages?: Array<{ language: string; model_id?: string; accent?: string; locale?: string }>;
}

export interface ElevenLabsBehaviour extends CommonBehaviour {
  status?: number; // non-200: answer an ElevenLabs error with this status (after the request validated)
  errorBody?: unknown; // override the error body (a string is sent as it is)
  retryAfter?: string; // Retry-After on error answers
  malformed?: true | string; // 200 that is not a valid answer: speech as JSON, voices without a list; a string is the body
  voices?: ElevenLabsVoiceInput[]; // the account's voices (default ELEVENLABS_VOICES)
}

export interface FakeElevenLabsOptions extends ElevenLabsBehaviour {
  apiKey?: string; // when set, `xi-api-key: <apiKey>` is required; otherwise any non-empty key
}

export interface RecordedElevenLabsRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The query parameters (one value per name). */
  query: Record<string, string>;
  /** Speech: the parsed JSON body. */
  json?: any;
}

export type FakeElevenLabs = FakeServer<ElevenLabsBehaviour, RecordedElevenLabsRequest>;

export const RACHEL_VOICE_ID = "21m00Tcm4TlvDq8ikWAM";

export const ELEVENLABS_VOICES: ElevenLabsVoiceInput[] = [
  {
    voice_id: RACHEL_VOICE_ID,
    name: "Rachel",
    category: "premade",
    labels: { accent: "american", description: "calm", age: "young", gender: "female", use_case: "narration" },
    verified_languages: [{ language: "en", model_id: "eleven_multilingual_v2", accent: "american", locale: "en-US" }],
  },
  {
    voice_id: "pNInz6obpgDQGcFmaJgB",
    name: "Adam",
    category: "premade",
    labels: { accent: "american", description: "deep", age: "middle aged", gender: "male", use_case: "narration" },
  },
  {
    voice_id: "XB0fDUnXU5powFXDhCwa",
    name: "Charlotte",
    category: "premade",
    labels: { accent: "swedish", language: "sv", gender: "female", use_case: "characters" },
    verified_languages: [
      { language: "sv", model_id: "eleven_multilingual_v2", accent: "standard", locale: "sv-SE" },
      { language: "en", model_id: "eleven_multilingual_v2", accent: "swedish", locale: "en-US" },
    ],
  },
];

/** Models and how many characters one call takes. */
export const ELEVENLABS_MODELS: Record<string, number> = {
  eleven_multilingual_v2: 10_000,
  eleven_flash_v2_5: 40_000,
  eleven_turbo_v2_5: 40_000,
  eleven_flash_v2: 30_000,
  eleven_turbo_v2: 30_000,
  eleven_v3: 5000,
  eleven_monolingual_v1: 10_000,
};

const OUTPUT_FORMATS = [
  /^(mp3)_(22050|24000|44100)_(32|48|64|96|128|192)$/,
  /^(pcm)_(8000|16000|22050|24000|32000|44100|48000)$/,
  /^(wav)_(8000|16000|22050|24000|32000|44100|48000)$/,
  /^(opus)_(48000)_(32|64|96|128|192)$/,
  /^(ulaw|alaw)_(8000)$/,
];

class ElevenLabsError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(JSON.stringify(body));
  }
}

const failure = (status: number, code: string, message: string) => new ElevenLabsError(status, { detail: { status: code, message } });
const invalid = (loc: Array<string | number>, msg: string, type: string) => new ElevenLabsError(422, { detail: [{ loc, msg, type }] });

export function startFakeElevenLabs(options: FakeElevenLabsOptions = {}): Promise<FakeElevenLabs> {
  const { apiKey, ...initial } = options;

  async function handle(exchange: Exchange<ElevenLabsBehaviour>, requests: RecordedElevenLabsRequest[]): Promise<void> {
    const { request, response, url, behaviour } = exchange;
    response.setHeader("request-id", `el_req_${exchange.sequence}`);
    const path = url.pathname.replace(/\/+$/, "");
    const recorded: RecordedElevenLabsRequest = { method: request.method ?? "GET", path, headers: { ...request.headers }, query: queryOf(url) };
    requests.push(recorded);
    if (await interrupted(exchange)) return;
    try {
      const speech = /^\/v1\/text-to-speech\/([^/]+)(\/stream)?$/.exec(path);
      const voices = path === "/v1/voices";
      if (!(request.method === "POST" && speech) && !(request.method === "GET" && voices)) throw new ElevenLabsError(404, { detail: "Not Found" });
      const key = request.headers["xi-api-key"];
      if (typeof key !== "string" || key === "") {
        throw failure(401, "needs_authorization", "Neither authorization header nor xi-api-key received, please provide one.");
      }
      if (apiKey !== undefined && key !== apiKey) throw failure(401, "invalid_api_key", "Invalid API key");
      const voiceList = behaviour.voices ?? ELEVENLABS_VOICES;
      const answer = speech ? await synthesize(exchange, recorded, decodeURIComponent(speech[1]!), voiceList) : voicesAnswer(voiceList);
      if (behaviour.status !== undefined && behaviour.status !== 200) {
        const headers: Record<string, string> = behaviour.retryAfter === undefined ? {} : { "retry-after": behaviour.retryAfter };
        sendJson(response, behaviour.status, behaviour.errorBody ?? errorForStatus(behaviour.status), headers);
        return;
      }
      if (behaviour.malformed !== undefined) {
        sendJson(response, 200, behaviour.malformed === true ? { status: "ok" } : behaviour.malformed);
        return;
      }
      sendBytes(response, answer.contentType, answer.body);
    } catch (error) {
      if (!(error instanceof ElevenLabsError)) throw error;
      sendJson(response, error.status, error.body);
    }
  }

  return startFakeServer(initial, "", handle, (response, error) =>
    sendJson(response, 500, { detail: { status: "internal_error", message: `fake crashed: ${String(error)}` } }),
  );
}

interface Answer {
  contentType: string;
  body: Buffer | string;
}

async function synthesize(
  exchange: Exchange<ElevenLabsBehaviour>,
  recorded: RecordedElevenLabsRequest,
  voice: string,
  voices: ElevenLabsVoiceInput[],
): Promise<Answer> {
  let body: any;
  try {
    body = JSON.parse(exchange.body.toString("utf8"));
  } catch {
    throw invalid(["body", 0], "Expecting value", "value_error.jsondecode");
  }
  recorded.json = body;
  const format = recorded.query.output_format ?? "mp3_44100_128";
  const match = OUTPUT_FORMATS.map((pattern) => pattern.exec(format)).find(Boolean);
  if (!match) throw invalid(["query", "output_format"], "value is not a valid enumeration member", "type_error.enum");
  if (typeof body !== "object" || body === null || typeof body.text !== "string") throw invalid(["body", "text"], "field required", "value_error.missing");
  const speed = body.voice_settings?.speed ?? 1;
  if (typeof speed !== "number") throw invalid(["body", "voice_settings", "speed"], "value is not a valid float", "type_error.float");
  if (speed < 0.7) throw invalid(["body", "voice_settings", "speed"], "ensure this value is greater than or equal to 0.7", "value_error.number.not_ge");
  if (speed > 1.2) throw invalid(["body", "voice_settings", "speed"], "ensure this value is less than or equal to 1.2", "value_error.number.not_le");
  const model = body.model_id ?? "eleven_multilingual_v2";
  const limit = ELEVENLABS_MODELS[model];
  if (limit === undefined) throw failure(400, "model_not_found", `A model with model ID ${String(model)} does not exist.`);
  if (!voices.some((known) => known.voice_id === voice)) throw failure(404, "voice_not_found", `A voice with voice_id ${voice} was not found.`);
  if (body.text.trim() === "") throw failure(400, "empty_text", "The text must not be empty.");
  if (body.text.length > limit) {
    throw failure(400, "max_character_limit_exceeded", `Text is ${body.text.length} characters; ${model} takes at most ${limit} per request.`);
  }
  const codec = match[1] as FakeAudioCodec;
  const bitrate = match[3] === undefined ? {} : { bitrateKbps: Number(match[3]) };
  const audio = await fakeAudio({ codec, sampleRate: Number(match[2]), durationSeconds: speechSeconds(body.text.length, speed), ...bitrate });
  return { contentType: AUDIO_MEDIA_TYPES[codec], body: audio };
}

function voicesAnswer(voices: ElevenLabsVoiceInput[]): Answer {
  const listed = voices.map((voice) => ({
    voice_id: voice.voice_id,
    name: voice.name,
    category: voice.category ?? "premade",
    labels: voice.labels ?? {},
    description: null,
    preview_url: `https://storage.googleapis.com/eleven-public-prod/premade/voices/${voice.voice_id}/preview.mp3`,
    available_for_tiers: [],
    settings: null,
    high_quality_base_model_ids: ["eleven_multilingual_v2", "eleven_flash_v2_5"],
    verified_languages: voice.verified_languages ?? [],
  }));
  return { contentType: "application/json", body: JSON.stringify({ voices: listed }) };
}

function errorForStatus(status: number): unknown {
  if (status === 401) return { detail: { status: "invalid_api_key", message: "Invalid API key" } };
  if (status === 402) return { detail: { status: "payment_required", message: "This request requires a paid subscription." } };
  if (status === 429) return { detail: { status: "too_many_concurrent_requests", message: "Too many concurrent requests for your subscription." } };
  if (status === 422) return { detail: [{ loc: ["body", "text"], msg: "field required", type: "value_error.missing" }] };
  if (status >= 500) return { detail: { status: "internal_error", message: "An internal error occurred. Please try again later." } };
  return { detail: { status: "quota_exceeded", message: `Request failed with status ${status} (fake upstream).` } };
}
