// The `local` provider's speech: model `espeak`, the espeak-ng binary on this machine. It answers
// WAV (what espeak makes); the gateway converts to the format asked for. Voices are the engine's
// own list. A missing engine is AudioEngineError `missing_engine` from src/media (the gateway's
// 503), one too slow to answer its version check `busy` (503 engine_busy: it is installed, the
// machine is loaded); a model, voice or speed it cannot speak is UnsupportedContentError (a 400).
import { AudioEngineError } from "../../media/audio-process.js";
import { type EngineLookup, lookupEspeak, slowEngineMessage } from "../../media/engines.js";
import { listEspeakVoices, synthesizeWithEspeak } from "../../media/espeak.js";
import type { SpeechAudio, SpeechCapability, SpeechRequest, Voice } from "../audio-types.js";
import { UnsupportedContentError } from "../provider-errors.js";

export const LOCAL_SPEECH_MODEL = "espeak";

export interface LocalSpeechOptions {
  /** How espeak-ng is looked up (default: lookupEspeak on PATH). */
  lookupEngine?: (env: NodeJS.ProcessEnv) => Promise<EngineLookup>;
}

export function createLocalSpeech(options: LocalSpeechOptions = {}): SpeechCapability {
  const lookupEngine = options.lookupEngine ?? ((env: NodeJS.ProcessEnv) => lookupEspeak(env));
  // The binary found for the PATH it was looked up on. A miss is not kept, so an install counts at
  // once, and neither is a slow answer: the next call asks again.
  let engine: { pathVariable: string | undefined; found: Promise<EngineLookup> } | undefined;

  async function espeak(): Promise<EngineLookup> {
    const pathVariable = process.env.PATH;
    if (!engine || engine.pathVariable !== pathVariable) engine = { pathVariable, found: lookupEngine(process.env) };
    const current = engine;
    const lookup = await current.found;
    if (lookup.status !== "found" && engine === current) engine = undefined;
    return lookup;
  }

  async function binary(): Promise<string> {
    const lookup = await espeak();
    if (lookup.status === "found") return lookup.engine.path;
    if (lookup.status === "slow") throw new AudioEngineError("busy", slowEngineMessage("espeak-ng", lookup.timeoutMs), { engine: "espeak-ng" });
    throw new AudioEngineError("missing_engine", "espeak-ng is not installed on this machine", { engine: "espeak-ng" });
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
    // A slow engine is installed: its model stays on offer, and its calls answer 503 engine_busy.
    async ready() {
      return (await espeak()).status !== "missing";
    },
  };
}

function checkModel(model: string): void {
  if (model !== LOCAL_SPEECH_MODEL) {
    throw new UnsupportedContentError(`The local provider has no speech model "${model}"; its speech model is "${LOCAL_SPEECH_MODEL}".`, "model");
  }
}
