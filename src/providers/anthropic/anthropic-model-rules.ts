// Per-model rules the Messages API enforces. The parameter docs of Anthropic's TypeScript SDK (2026,
// https://github.com/anthropics/anthropic-sdk-typescript, src/resources/messages/messages.ts) say models after
// Claude Opus 4.6 accept temperature only at 1.0, top_p only >= 0.99 and no top_k at all, and
// newer models reject assistant prefill. We recognise them by the current naming,
// `claude-<family>-<major>[-<minor>][-<date>]`: a version above 4.6 is "newer". Older names
// (`claude-3-5-sonnet-20241022`) and anything unrecognised keep the classic rules.

const CURRENT_NAMING = /^claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?(?:$|[-@])/;

/** Sampling is fixed by the model: temperature, top_p and top_k must not be sent. */
export function hasFixedSampling(model: string): boolean {
  const match = CURRENT_NAMING.exec(model);
  if (!match) return false;
  const major = Number(match[1]);
  const minor = match[2] === undefined ? 0 : Number(match[2]);
  return major > 4 || (major === 4 && minor > 6);
}

/** The conversation must end with a user turn (no assistant prefill). */
export function rejectsPrefill(model: string): boolean {
  return hasFixedSampling(model);
}
