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
  const details = (typeof fields.prompt_tokens_details === "object" && fields.prompt_tokens_details !== null ? fields.prompt_tokens_details : {}) as Record<
    string,
    unknown
  >;
  const prompt = fields.prompt_tokens;
  const output = fields.completion_tokens;
  const cacheRead = details.cached_tokens ?? 0;
  const cacheWrite = details.cache_write_tokens ?? 0;
  if (!isTokenCount(prompt)) return invalid("prompt_tokens", prompt);
  if (!isTokenCount(output)) return invalid("completion_tokens", output);
  if (!isTokenCount(cacheRead)) return invalid("prompt_tokens_details.cached_tokens", cacheRead);
  if (!isTokenCount(cacheWrite)) return invalid("prompt_tokens_details.cache_write_tokens", cacheWrite);
  if (cacheRead + cacheWrite > prompt) return { invalid: `cached tokens (${cacheRead + cacheWrite}) exceed prompt_tokens (${prompt})` };
  return { counts: { input: prompt - cacheRead - cacheWrite, cacheRead, cacheWrite, output } };
}

/** Anthropic's usage: input_tokens excludes the cache reads and writes, which come beside it. */
export function readMessagesUsage(usage: unknown): UsageReading {
  if (usage === undefined || usage === null) return { missing: true };
  if (typeof usage !== "object") return { invalid: `usage is ${typeof usage}` };
  const fields = usage as Record<string, unknown>;
  const input = fields.input_tokens;
  const output = fields.output_tokens;
  const cacheRead = fields.cache_read_input_tokens ?? 0;
  const cacheWrite = fields.cache_creation_input_tokens ?? 0;
  if (!isTokenCount(input)) return invalid("input_tokens", input);
  if (!isTokenCount(output)) return invalid("output_tokens", output);
  if (!isTokenCount(cacheRead)) return invalid("cache_read_input_tokens", cacheRead);
  if (!isTokenCount(cacheWrite)) return invalid("cache_creation_input_tokens", cacheWrite);
  return { counts: { input, cacheRead, cacheWrite, output } };
}

/** OpenAI's embeddings usage: `prompt_tokens`, every one an input token (there is no output). */
export function readEmbeddingUsage(usage: unknown): UsageReading {
  if (usage === undefined || usage === null) return { missing: true };
  if (typeof usage !== "object") return { invalid: `usage is ${typeof usage}` };
  const prompt = (usage as Record<string, unknown>).prompt_tokens;
  if (!isTokenCount(prompt)) return invalid("prompt_tokens", prompt);
  return { counts: { input: prompt, cacheRead: 0, cacheWrite: 0, output: 0 } };
}

export function totalInput(counts: TokenCounts): number {
  return counts.input + counts.cacheRead + counts.cacheWrite;
}

function invalid(name: string, value: unknown): { invalid: string } {
  return { invalid: value === undefined ? `${name} is missing` : `${name} is ${JSON.stringify(value) ?? String(value)}` };
}

function isTokenCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && value <= MAX_REPORTED_TOKENS;
}
