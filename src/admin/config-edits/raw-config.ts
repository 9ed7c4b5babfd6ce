// Reading and editing the raw config JSON (as written, `${ENV}` references kept) inside an edit of
// the config (config/config-file.ts editConfig, or the shared document on Redis).
import { ConfigError } from "../../config/config-error.js";
import type { RawConfig } from "../../config/config-file.js";
import { isObject } from "../../json/json-values.js";

// The one object test (src/json), under the name the config editors use.
export { isObject as isRecord };

/** How the edited document is named in refusals, whether it is the home's file or the shared one on Redis. */
const DOCUMENT = "config.json";

/** A config section that is not what it must be (an object, an array): a hand-edited document. */
export function malformed(path: string, expected: string): ConfigError {
  return new ConfigError(`expected ${expected}`, DOCUMENT, path);
}

/**
 * The object at `raw[key]`, created when missing. Its entries are named by the caller
 * (`gw providers set NAME`, `PATCH /admin/v1/providers/NAME`), so it has no prototype:
 * `constructor` or `__proto__` reads as a missing entry and writes as an own one (which
 * validation then judges). JSON.stringify writes it as before.
 */
export function objectAt(raw: RawConfig, key: string): Record<string, unknown> {
  const value = raw[key];
  if (value === undefined) {
    const created: Record<string, unknown> = Object.create(null);
    raw[key] = created;
    return created;
  }
  if (!isObject(value)) throw malformed(key, "an object");
  return Object.setPrototypeOf(value, null) as Record<string, unknown>;
}

/** The array at `raw[key]`, created when missing. */
export function arrayAt(raw: RawConfig, key: string): unknown[] {
  const value = raw[key];
  if (value === undefined) {
    const created: unknown[] = [];
    raw[key] = created;
    return created;
  }
  if (!Array.isArray(value)) throw malformed(key, "an array");
  return value;
}

export function stringField(entry: unknown, key: string): string | undefined {
  if (!isObject(entry)) return undefined;
  const value = entry[key];
  return typeof value === "string" ? value : undefined;
}
