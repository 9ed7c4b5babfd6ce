// The `local` provider's speech: model `espeak`, the espeak-ng binary on this machine. It answers
// WAV (what espeak makes); the gateway converts to the format asked for. Voices are the engine's
// own list. A missing engine is AudioEngineError `missing_engine` from src/media (the gateway's
// 503); a model, voice or speed it cannot speak is UnsupportedContentError (a 400).
import { AudioEngineError } from "../../media/audio-process.js";
import { type EngineInfo, findEspeak } from "../../media/engines.js";
import { listEspeakVoices, synthesizeWithEspeak } from "../../media/espeak.js";
import type { SpeechAudio, SpeechCapability, SpeechRequest, Voice } from "../audio-types.js";
import { UnsupportedContentError } from "../provider-errors.js";

export const LOCAL_SPEECH_MODEL = "espeak";

export interface LocalSpeechOptions {
  /** Where espeak-ng is (default: findEspeak on PATH). */
  findEngine?: (env: NodeJS.ProcessEnv) => Promise<EngineInfo | null>;
}

export function createLocalSpeech(options: LocalSpeechOptions = {}): SpeechCapability {
  const findEngine = options.findEngine ?? findEspeak;
  // The binary found for the PATH it was looked up on; a miss is not kept, so an install counts at once.
  let engine: { pathVariable: string | undefined; found: Promise<EngineInfo | null> } | undefined;

  async function espeak(): Promise<EngineInfo | null> {
    const pathVariable = process.env.PATH;
    if (!engine || engine.pathVariable !== pathVariable) engine = { pathVariable, found: findEngine(process.env) };
    const current = engine;
    const found = await current.found;
    if (!found && engine === current) engine = undefined;
    return found;
  }

  async function binary(): Promise<string> {
    const found = await espeak();
    if (!found) throw new AudioEngineError("missing_engine", "espeak-ng is not installed on this machine", { engine: "espeak-ng" });
    return found.path;
  }

  /** Run `work` with the binary; an engine that vanished since it was found is looked up again next time. */
  async function withEngine<T>(work: (path: string) => Promise<T>): Promise<T> {
    const path = await binary();
    try {
      return await work(path);
    } catch (error) {
      if (error instanceof AudioEngineError && error.reason === "missing_engine" && error.engine === "espeak-ng") engine = undefined;
      throw error;
    }
  }

  async function voices(model: string, signal: AbortSignal): Promise<Voice[]> {
    checkModel(model);
    return withEngine(async (path) => (await listEspeakVoices(path, { signal })).map((voice) => ({ ...voice, languages: [...voice.languages] })));
  }

  return {
    async synthesize(request: SpeechRequest, { signal }): Promise<SpeechAudio> {
      checkModel(request.model);
      if (!Number.isFinite(request.speed) || request.speed < 0.25 || request.speed > 4) {
        throw new UnsupportedContentError(`espeak speaks at speeds from 0.25 to 4, not ${request.speed}.`, "speed");
      }
      const known = await voices(request.model, signal);
      if (!known.some((voice) => voice.id === request.voice)) {
        throw new UnsupportedContentError(`espeak has no voice "${request.voice}"; its voices are listed at the speech voices endpoint.`, "voice");
      }
      const bytes = await withEngine((path) => synthesizeWithEspeak(request.input, { binary: path, voice: request.voice, speed: request.speed, signal }));
      return { bytes, format: "wav" };
    },
    voices: (model, { signal }) => voices(model, signal),
    async ready() {
      return (await espeak()) !== null;
    },
  };
}

function checkModel(model: string): void {
  if (model !== LOCAL_SPEECH_MODEL) {
    throw new UnsupportedContentError(`The local provider has no speech model "${model}"; its speech model is "${LOCAL_SPEECH_MODEL}".`, "model");
  }
}
