// Read, interpolate and validate a config file. Throws ConfigError naming the bad field.
import { readFileSync } from "node:fs";
import { ConfigError } from "./config-error.js";
import { configSchema } from "./config-schema.js";
import { envVariableUses } from "./env-references.js";
import { interpolateEnv } from "./interpolate-env.js";
import { type Config, resolveConfig } from "./resolved-config.js";

export function parseConfigText(text: string, file: string, env: NodeJS.ProcessEnv = process.env): Config {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`not valid JSON (${(error as Error).message})`, file);
  }
  const result = configSchema.safeParse(interpolateEnv(raw, env));
  if (!result.success) throw ConfigError.fromZod(result.error, file);
  return resolveConfig(result.data, envVariableUses(raw, env));
}

export function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  return parseConfigText(readConfigText(file), file, env);
}

/** The file's text; a missing or unreadable file is a ConfigError saying which. */
export function readConfigText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(code === "ENOENT" ? "config file not found (run `gw init`)" : `cannot read (${code})`, file);
  }
}

/** The raw JSON of the file, without interpolation: what provisioning commands edit. */
export function readRawConfig(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
}

/** A config document's raw JSON object (no interpolation); anything else is a ConfigError naming `label`. */
export function parseRawConfig(text: string, label: string): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`not valid JSON (${(error as Error).message})`, label);
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new ConfigError("not a JSON object", label);
  return raw as Record<string, unknown>;
}
