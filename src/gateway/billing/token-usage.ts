// The token counts a call is billed for, read from what the upstream reported. Upstream numbers
// are not trusted: a count that is not a non-negative safe integer within a sane bound ("ten",
// 1e308, -5) makes the whole usage invalid, and the call is billed from the gateway's own
// estimate instead. Otherwise one odd number would write a row without credits and switch
// billing off for the agent.

export interface TokenCounts {
  /** Input tokens at the full input price (cache reads and writes not included). */
  input: number;
  /** Input tokens read from the vendor's prompt cache. */
  cacheRead: number;
  /** Input tokens written to the vendor's prompt cache. */
  cacheWrite: number;
  output: number;
}

/** No single call comes near this (the largest context windows are a few million tokens). */
export const MAX_REPORTED_TOKENS = 100_000_000;

export type UsageReading = { counts: TokenCounts } | { invalid: string } | { missing: true };

/**
 * OpenAI's usage (also what every converted vendor reports): prompt_tokens includes the cached
 * part (`prompt_tokens_details.cached_tokens`) and, from Anthropic via OpenRouter's naming,
 * `cache_write_tokens`.
 */
export function readChatUsage(usage: unknown): UsageReading {
  if (usage === undefined || usage === null) return { missing: true };
  if (typeof usage !== "object") return { invalid: `usage is ${typeof usage}` };
  const fields = usage as Record<string, unknown>;
  const details = (typeof fields.prompt_tokens_details === "object" && fields.prompt_tokens_details !== null ? fields.prompt_tokens_details : {}) as Record<string, unknown>;
  const counts = checked({
    prompt_tokens: fields.prompt_tokens,
    completion_tokens: fields.completion_tokens,
    cached_tokens: details.cached_tokens ?? 0,
    cache_write_tokens: details.cache_write_tokens ?? 0,
  });
  if ("invalid" in counts) return counts;
  const { prompt_tokens: prompt, completion_tokens: output, cached_tokens: cacheRead, cache_write_tokens: cacheWrite } = counts.values;
  if (cacheRead + cacheWrite > prompt) return { invalid: `cached tokens (${cacheRead + cacheWrite}) exceed prompt_tokens (${prompt})` };
  return { counts: { input: prompt - cacheRead - cacheWrite, cacheRead, cacheWrite, output } };
}

/** Anthropic's usage: input_tokens excludes the cache reads and writes, which come beside it. */
export function readMessagesUsage(usage: unknown): UsageReading {
  if (usage === undefined || usage === null) return { missing: true };
  if (typeof usage !== "object") return { invalid: `usage is ${typeof usage}` };
  const fields = usage as Record<string, unknown>;
  const counts = checked({
    input_tokens: fields.input_tokens,
    output_tokens: fields.output_tokens,
    cache_read_input_tokens: fields.cache_read_input_tokens ?? 0,
    cache_creation_input_tokens: fields.cache_creation_input_tokens ?? 0,
  });
  if ("invalid" in counts) return counts;
  const values = counts.values;
  return { counts: { input: values.input_tokens, cacheRead: values.cache_read_input_tokens, cacheWrite: values.cache_creation_input_tokens, output: values.output_tokens } };
}

export function totalInput(counts: TokenCounts): number {
  return counts.input + counts.cacheRead + counts.cacheWrite;
}

function checked<K extends string>(fields: Record<K, unknown>): { values: Record<K, number> } | { invalid: string } {
  for (const [name, value] of Object.entries(fields) as Array<[K, unknown]>) {
    if (value === undefined) return { invalid: `${name} is missing` };
    if (!isTokenCount(value)) return { invalid: `${name} is ${JSON.stringify(value) ?? String(value)}` };
  }
  return { values: fields as Record<K, number> };
}

function isTokenCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && value <= MAX_REPORTED_TOKENS;
}
