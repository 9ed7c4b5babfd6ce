// Speech from the local espeak-ng binary, and the voices it speaks. The text goes in on stdin
// (`--stdin`), never in argv: a text that starts with `-` is spoken, not read as an option, and
// its size is not bounded by the OS's argument limit. SSML stays off (no `-m`), so markup-like
// text is read as text.
//
// Speed: espeak-ng takes 80 to 450 words a minute (175 is normal), while callers may ask for
// 0.25x to 4x (44 to 700). A speed inside the engine's range is spoken at that rate; outside it,
// espeak speaks at the nearest rate it takes and ffmpeg's atempo (pitch kept) stretches or
// squeezes the rest, so every speed of the catalog's range is honoured.
import { convertAudio } from "./audio-convert.js";
import { AudioEngineError, runEngine } from "./audio-process.js";

export interface EspeakOptions {
  /** The espeak-ng binary (see findEspeak in engines.ts). */
  binary: string;
  /** An espeak-ng voice id (`en-us`, `fr-fr`, `en-us+f3`). */
  voice: string;
  /** Playback rate, 0.25 to 4 (1 is normal). */
  speed: number;
  signal?: AbortSignal;
  /** Default 60 s, for the synthesis and again for a tempo adjustment; the engine is killed after it. */
  timeoutMs?: number;
  /** The ffmpeg binary for speeds outside espeak's range (default: found like findFfmpeg). */
  ffmpeg?: string;
}

export interface EspeakVoice {
  /** The language code espeak-ng selects the voice by (`en-us`). */
  id: string;
  /** `English (America)`. */
  name: string;
  /** The id, then the other language codes the voice is listed for. */
  languages: string[];
}

export const ESPEAK_WORDS_PER_MINUTE = { normal: 175, min: 80, max: 450 } as const;
/** A voice id: letters, digits, `_`, `+` (variants), `-`; never starting with `-` or `+`. */
export const ESPEAK_VOICE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_+-]*$/;

const DEFAULT_TIMEOUT_MS = 60_000;
const LIST_TIMEOUT_MS = 10_000;
// Words a minute within this fraction of the wanted rate need no tempo stage.
const TEMPO_TOLERANCE = 0.005;

/** The rate to ask espeak for, and the tempo factor ffmpeg applies after it (1: none). */
export function espeakRate(speed: number): { wordsPerMinute: number; tempo: number } {
  if (!Number.isFinite(speed) || speed < 0.25 || speed > 4) throw new RangeError(`speed ${speed} is outside 0.25..4`);
  const wanted = ESPEAK_WORDS_PER_MINUTE.normal * speed;
  const wordsPerMinute = Math.min(ESPEAK_WORDS_PER_MINUTE.max, Math.max(ESPEAK_WORDS_PER_MINUTE.min, Math.round(wanted)));
  const tempo = wanted / wordsPerMinute;
  return { wordsPerMinute, tempo: Math.abs(tempo - 1) <= TEMPO_TOLERANCE ? 1 : tempo };
}

/** WAV bytes (16-bit mono, espeak's own rate) speaking `text`; AudioEngineError on failure. */
export async function synthesizeWithEspeak(text: string, options: EspeakOptions): Promise<Buffer> {
  if (!ESPEAK_VOICE_PATTERN.test(options.voice)) throw new RangeError(`"${options.voice}" is not an espeak-ng voice id`);
  const { wordsPerMinute, tempo } = espeakRate(options.speed);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const args = ["--stdout", "--stdin", "-b", "1", "-v", options.voice, "-s", String(wordsPerMinute)];
  const spoken = await runEngine("espeak-ng", options.binary, args, { stdin: Buffer.from(text, "utf8"), signal: options.signal, timeoutMs });
  if (spoken.length < 44) throw new AudioEngineError("failed", "espeak-ng produced no audio", { engine: "espeak-ng" });
  const wav = withTrueWavSizes(spoken);
  if (tempo === 1) return wav;
  const ffmpeg = options.ffmpeg;
  return convertAudio({ bytes: wav, format: "wav" }, "wav", {
    tempo,
    timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(ffmpeg ? { ffmpeg } : {}),
  });
}

/**
 * espeak-ng writes WAV to stdout before it knows the length, so its RIFF and data sizes are
 * placeholders (0x7fff....). Set them to what the bytes hold, so a caller served the WAV as it
 * is gets a file every reader takes. Bytes that are not a RIFF/WAVE are returned untouched.
 */
export function withTrueWavSizes(wav: Buffer): Buffer {
  if (wav.length < 12 || wav.toString("latin1", 0, 4) !== "RIFF" || wav.toString("latin1", 8, 12) !== "WAVE") return wav;
  const fixed = Buffer.from(wav);
  let offset = 12;
  while (offset + 8 <= fixed.length) {
    const id = fixed.toString("latin1", offset, offset + 4);
    if (id === "data") {
      fixed.writeUInt32LE(fixed.length - offset - 8, offset + 4);
      fixed.writeUInt32LE(fixed.length - 8, 4);
      return fixed;
    }
    const size = fixed.readUInt32LE(offset + 4);
    offset += 8 + size + (size % 2);
  }
  return wav;
}

const voiceLists = new Map<string, Promise<EspeakVoice[]>>();

/** The voices `espeak-ng --voices` lists, kept per binary (a failed listing is not kept). */
export function listEspeakVoices(binary: string, options: { signal?: AbortSignal } = {}): Promise<EspeakVoice[]> {
  let listing = voiceLists.get(binary);
  if (!listing) {
    // Not tied to one caller's signal: the result is shared.
    listing = runEngine("espeak-ng", binary, ["--voices"], { timeoutMs: LIST_TIMEOUT_MS }).then((output) => parseEspeakVoices(output.toString("utf8")));
    voiceLists.set(binary, listing);
    listing.catch(() => {
      if (voiceLists.get(binary) === listing) voiceLists.delete(binary);
    });
  }
  const signal = options.signal;
  if (!signal) return listing;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    listing.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * Parse `espeak-ng --voices`: a header, then `Pty Language Age/Gender VoiceName File [Other
 * Languages]` rows split by spaces (names use `_` for spaces), the other languages as
 * `(code priority)` groups: ` 2  en-us  --/M  English_(America)  gmw/en-US  (en 3)`.
 */
export function parseEspeakVoices(output: string): EspeakVoice[] {
  const voices: EspeakVoice[] = [];
  const seen = new Set<string>();
  for (const line of output.split("\n")) {
    const columns = line.trim().split(/\s+/);
    if (columns.length < 5 || !/^\d+$/.test(columns[0]!)) continue;
    const id = columns[1]!;
    if (!ESPEAK_VOICE_PATTERN.test(id) || seen.has(id)) continue;
    seen.add(id);
    const others = [
      ...columns
        .slice(5)
        .join(" ")
        .matchAll(/\(([^\s()]+)\s+\d+\)/g),
    ].map((match) => match[1]!);
    voices.push({ id, name: columns[3]!.replaceAll("_", " "), languages: [...new Set([id, ...others])] });
  }
  return voices;
}
