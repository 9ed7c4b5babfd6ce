// Plain JSON values as gw reads them: an object test, parsing that answers undefined rather than
// throwing, an object without some of its fields, and a short preview of a line for a log. A leaf module: it imports nothing from gw.

/** A JSON object (not an array, not null). */
export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The object without `fields`: itself when it has none of them (one check per field), else a copy
 * built key by key. Not a spread and `delete`: that turns the copy into a slow dictionary object
 * for every spread and JSON.stringify after it, on each chat call that names max_tokens.
 */
export function withoutFields<T extends object>(value: T, fields: readonly string[]): T {
  if (!fields.some((field) => field in value)) return value;
  const source = value as Json;
  const copy: Json = {};
  for (const key in source) if (Object.hasOwn(source, key) && !fields.includes(key)) copy[key] = source[key];
  return copy as T;
}

/** The text as JSON, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The text as a JSON object, or undefined when it is not JSON or not an object. */
export function parseJsonObject(text: string): Json | undefined {
  const value = parseJson(text);
  return isObject(value) ? value : undefined;
}

/**
 * A cheap shape test for a JSON payload, for relays that forward events without parsing them: a
 * line that cannot be a JSON object (garbage, a truncated event) is skipped, not relayed to a
 * client that would fail to parse it, and the good events read with it are kept.
 */
export function looksLikeJsonObject(text: string): boolean {
  const end = text.length - 1;
  return end > 0 && text.charCodeAt(0) === OPEN_BRACE && text.charCodeAt(end) === CLOSE_BRACE;
}

const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/** The start of an upstream line for a log message (already redacted by the reader), quoted. */
export function preview(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
}
