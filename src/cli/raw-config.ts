// Reading and editing the raw config JSON (as written, `${ENV}` references kept) inside editConfig.
import type { RawConfig } from "../config/config-file.js";
import { isObject } from "../json/json-values.js";
import { CliError } from "./cli-error.js";

// The one object test (src/json), under the name the config editors use.
export { isObject as isRecord };

/**
 * The object at `raw[key]`, created when missing. Its entries are named on the command line
 * (`gw providers set NAME`, `gw tools enable TOOL`), so it has no prototype: `constructor` or
 * `__proto__` reads as a missing entry and writes as an own one (which validation then judges).
 * JSON.stringify writes it as before.
 */
export function objectAt(raw: RawConfig, key: string): Record<string, unknown> {
  const value = raw[key];
  if (value === undefined) {
    const created: Record<string, unknown> = Object.create(null);
    raw[key] = created;
    return created;
  }
  if (!isObject(value)) throw new CliError(`config.json: ${key}: expected an object`);
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
  if (!Array.isArray(value)) throw new CliError(`config.json: ${key}: expected an array`);
  return value;
}

export function stringField(entry: unknown, key: string): string | undefined {
  if (!isObject(entry)) return undefined;
  const value = entry[key];
  return typeof value === "string" ? value : undefined;
}
