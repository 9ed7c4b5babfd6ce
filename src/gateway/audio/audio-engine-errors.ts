// What a local audio engine's failure (ffmpeg, ffprobe, espeak-ng) means to the caller: not
// installed is the operator's matter (503 provider_not_configured, naming the engine), installed
// but too busy to answer its version check a 503 engine_busy to retry, too slow a
// 504, anything else a 502 naming the provider. The engine's own output stays in the log: it may
// hold temp paths.
import { AudioEngineError } from "../../media/audio-process.js";
import { EngineBusyError, ProviderNotConfiguredError, UpstreamUnavailableError } from "../errors.js";

export function audioEngineFailure(error: unknown, provider: string, warn?: (message: string) => void): unknown {
  if (!(error instanceof AudioEngineError)) return error;
  if (error.detail) warn?.(`audio engine ${error.engine ?? ""} failed: ${error.message}: ${error.detail}`);
  if (error.reason === "missing_engine") return new ProviderNotConfiguredError(`Audio cannot be processed on this gateway: ${error.message}.`, { provider });
  if (error.reason === "busy") return new EngineBusyError(`Audio cannot be processed right now: ${error.message}.`, { provider });
  if (error.reason === "timeout")
    return new UpstreamUnavailableError(`The audio engine took too long: ${error.message}.`, { status: 504, code: "audio_engine_timeout", provider });
  return new UpstreamUnavailableError(`The audio engine failed: ${error.message}.`, { status: 502, code: "audio_engine_failed", provider });
}

/** Run engine work, turning its failures into gateway errors. */
export async function withAudioEngine<T>(provider: string, work: () => Promise<T>, warn?: (message: string) => void): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw audioEngineFailure(error, provider, warn);
  }
}
