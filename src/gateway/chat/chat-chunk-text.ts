// Reading a streamed chat chunk from its JSON text without parsing it, for relays that see one
// event per token: JSON.parse of a ~250-byte chunk builds four objects and costs about a
// microsecond, twenty times a request. Only the commonest chunk is read so (the first choice's
// content and nothing else); every other shape answers undefined and is parsed as usual.

const QUOTE = 34;
const BACKSLASH = 92;

/**
 * What OpenAI and the compatible servers write before a content delta of the first choice; the
 * key's opening quote is checked apart: V8 finds a pattern by its first character, and a JSON
 * text is full of quotes (see stream-relay.ts).
 */
const TEXT_DELTA_START = 'choices":[{"index":0,"delta":{"content":"';
/** After the content string: the delta holds nothing else, the choice goes on unfinished. */
const TEXT_DELTA_REST = ['},"logprobs":null,"finish_reason":null}]', '},"finish_reason":null}]'];

/** A chunk's content delta: the text and the same text as a JSON string literal (quotes included). */
export interface TextDelta {
  text: string;
  literal: string;
}

/**
 * The first choice's content delta, when the chunk is nothing but that (no other choice, no tool
 * call, refusal, finish reason or usage); undefined for any other chunk.
 */
export function plainTextDelta(json: string): TextDelta | undefined {
  const at = json.indexOf(TEXT_DELTA_START);
  if (at <= 0 || json.charCodeAt(at - 1) !== QUOTE) return undefined;
  const start = at + TEXT_DELTA_START.length;
  const end = closingQuote(json, start);
  if (!TEXT_DELTA_REST.some((rest) => json.startsWith(rest, end + 1))) return undefined;
  // A usage object, before or after the choices, is read by the parser (a string's quotes are escaped: no false match).
  if (json.includes('usage":{')) return undefined;
  const literal = json.slice(start - 1, end + 1);
  return { text: literal.includes("\\") ? (JSON.parse(literal) as string) : literal.slice(1, -1), literal };
}

/** Index of the quote that closes the JSON string whose text starts at `from` (the text's length when none does). */
export function closingQuote(json: string, from: number): number {
  for (let quote = json.indexOf('"', from); quote >= 0; quote = json.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (json.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
  }
  return json.length;
}
