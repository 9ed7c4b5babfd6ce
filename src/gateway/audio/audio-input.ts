// The caller's audio for transcription, as bytes the gateway has checked: from a multipart part,
// base64 (bare or a data: URL) or an http(s) URL downloaded through the SSRF-safe fetcher; at
// most the model's upload size (413 naming the limit); sniffed as real audio and probed with
// ffprobe, which measures its length from the packets (a header's claim is not believed), before
// any upstream call or charge. Every refusal names the request field the audio came in.
import { AudioInputError, type ProbedAudio, probeAudio } from "../../media/audio-probe.js";
import { InvalidImageError } from "../../media/image-error.js";
import { bytesFromBase64, bytesFromDataUrl } from "../../media/image-source.js";
import type { FetchedResource } from "../../net/safe-fetch.js";
import { FetchFailedError } from "../../net/safe-fetch-errors.js";
import { roundedSize } from "../../text/byte-sizes.js";
import { EngineBusyError, InvalidRequestError, PayloadTooLargeError, ProviderNotConfiguredError } from "../errors.js";
import { pictureError, type UrlFetcher } from "../media/picture-input.js";
import type { AudioSource } from "./transcription-request.js";

const FETCH_TIMEOUT_MS = 60_000;

export interface CheckedAudio {
  bytes: Buffer;
  probed: ProbedAudio;
  /** A name with the sniffed extension, for vendors that read the type from it. */
  filename: string;
}

export async function readAudio(source: AudioSource, options: { maxBytes: number; fetch: UrlFetcher; signal?: AbortSignal }): Promise<CheckedAudio> {
  const bytes = await bytesOf(source, options);
  if (bytes.length > options.maxBytes) throw tooLarge(source.param, options.maxBytes, bytes.length);
  let probed: ProbedAudio;
  try {
    probed = await probeAudio(bytes, options.signal ? { signal: options.signal } : {});
  } catch (error) {
    throw audioError(error, source.param);
  }
  // Only the audio that was measured (and is billed) goes upstream.
  const measured = probed.measuredBytes !== undefined ? bytes.subarray(0, probed.measuredBytes) : bytes;
  return { bytes: measured, probed, filename: `audio.${probed.extension}` };
}

async function bytesOf(source: AudioSource, options: { maxBytes: number; fetch: UrlFetcher; signal?: AbortSignal }): Promise<Buffer> {
  if (source.kind === "bytes") return source.bytes;
  if (source.kind === "url") {
    const url = source.url.trim();
    if (!/^https?:\/\//i.test(url)) {
      throw new InvalidRequestError(`The URL in '${source.param}' is not allowed: only http and https URLs can be fetched.`, {
        param: source.param,
        code: "url_not_allowed",
      });
    }
    let fetched: FetchedResource;
    try {
      fetched = await options.fetch(url, {
        maxBytes: options.maxBytes,
        timeoutMs: FETCH_TIMEOUT_MS,
        accept: "audio/*, video/*;q=0.5",
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      // Over the model's upload size is 413 naming the limit, however the audio came.
      if (error instanceof FetchFailedError && error.reason === "too_large") throw tooLarge(source.param, options.maxBytes);
      throw pictureError(error, source.param, "audio");
    }
    return fetched.bytes;
  }
  try {
    const text = source.value.trim();
    return /^data:/i.test(text) ? bytesFromDataUrl(text, options.maxBytes) : bytesFromBase64(text, options.maxBytes, "audio data");
  } catch (error) {
    if (!(error instanceof InvalidImageError)) throw error;
    if (error.reason === "too_large") throw tooLarge(source.param, options.maxBytes);
    throw new InvalidRequestError(`The audio in '${source.param}' was refused: ${error.message}.`, { param: source.param, code: "invalid_audio" });
  }
}

function tooLarge(param: string, maxBytes: number, size?: number): PayloadTooLargeError {
  const sent = size === undefined ? "" : ` (${roundedSize(size)} was sent)`;
  return new PayloadTooLargeError(`The audio in '${param}' is larger than the ${roundedSize(maxBytes)} this model takes${sent}.`, { param });
}

function audioError(error: unknown, param: string): unknown {
  if (!(error instanceof AudioInputError)) return error;
  if (error.reason === "missing_engine") return new ProviderNotConfiguredError(`Audio cannot be checked on this gateway: ${withFullStop(error.message)}`);
  if (error.reason === "engine_busy") return new EngineBusyError(error.message);
  return new InvalidRequestError(`The audio in '${param}' was refused: ${withFullStop(error.message)}`, { param, code: "invalid_audio" });
}

/** The probe's messages are sentences already: end on one full stop, not two. */
function withFullStop(text: string): string {
  return `${text.replace(/\.+$/, "")}.`;
}
