// How deep JSON may nest: deeper than every real request (chat messages with JSON Schema tools
// reach about 20), far shallower than what breaks the code that reads it. JSON.parse takes any
// depth, but JSON.stringify, zod and the converters recurse, and a few thousand levels in a 20 KB
// body are a RangeError (a 500) wherever the value is read next. Request bodies are checked on
// arrival (server/read-json-body.ts); JSON a client puts inside a string (tool arguments, tool
// results) is checked where a converter parses it.

export const MAX_JSON_DEPTH = 64;

/**
 * Whether objects and arrays nest deeper than `limit`. Recursive, but never deeper than `limit`
 * + 1 frames: it stops at the first level past the limit, however deep the value goes.
 */
export function nestingDepthExceeds(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== "object") return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestingDepthExceeds(item, limit - 1)) return true;
    return false;
  }
  for (const key in value) if (nestingDepthExceeds((value as Record<string, unknown>)[key], limit - 1)) return true;
  return false;
}
