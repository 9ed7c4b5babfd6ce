// How much of an upstream answer gw reads (docs/decisions.md §4): each kind of answer has its cap
// (`upstream.maxAnswerBytes`), and an answer that passes it fails in words that name the cap, the
// setting and the provider.
import type { AnswerCaps } from "../config/config-schema.js";
import { exactSize } from "../text/byte-sizes.js";
import { UpstreamNetworkError } from "./upstream-errors.js";

/**
 * What a 2xx answer is, which picks its cap. `file`: a file its caller streams to disk and
 * bounds itself, size and time (a finished video clip), so neither the cap nor the request's
 * total time applies.
 */
export type AnswerKind = Exclude<keyof AnswerCaps, "error"> | "file";

/** An answer's cap while it is read. */
export interface AnswerLimit {
  maxBytes: number;
  /** The failure of an answer that passed the cap. */
  passed(): Error;
}

export function answerLimit(provider: string, kind: keyof AnswerCaps, caps: AnswerCaps): AnswerLimit {
  const maxBytes = caps[kind];
  return {
    maxBytes,
    passed: () =>
      new UpstreamNetworkError(provider, "answer_too_large", `the answer from ${provider} passed ${capInWords(kind, maxBytes)}; gw stopped reading it`),
  };
}

/** An answer whose Content-Length is over its cap: failed before a byte of it is read. */
export function announcedTooLarge(provider: string, kind: keyof AnswerCaps, caps: AnswerCaps, length: number): UpstreamNetworkError {
  return new UpstreamNetworkError(
    provider,
    "answer_too_large",
    `${provider} announced an answer of ${exactSize(length)}, over ${capInWords(kind, caps[kind])}`,
  );
}

/** The error body gw answers with in place of one over its cap (which is not read). */
export function unreadErrorBody(provider: string, status: number, caps: AnswerCaps): string {
  const message = `${provider} answered HTTP ${status} with an error body over ${capInWords("error", caps.error)}; gw did not read it.`;
  return JSON.stringify({ error: { message, type: "upstream_error", param: null, code: "upstream_error_too_large" } });
}

function capInWords(kind: keyof AnswerCaps, maxBytes: number): string {
  const what = kind === "error" ? "error bodies" : `${kind} answers`;
  return `the ${exactSize(maxBytes)} cap on ${what} (upstream.maxAnswerBytes.${kind})`;
}
