// Provisioning edits of config.json (providers, routes, plans): a locked read-modify-write of
// the raw JSON (keeping `${ENV}` references as written), validated as a whole before it is
// written atomically. An invalid result is refused with the path of the bad field.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../store/atomic-write.js";
import { withFileLock } from "../store/file-lock.js";
import { parseConfigText, readRawConfig } from "./load-config.js";
import { projectRoot } from "./project-root.js";
import type { Config } from "./resolved-config.js";

export type RawConfig = Record<string, unknown>;

/** config/default.json as shipped: the embedded defaults `gw init` writes. */
export function defaultConfigText(): string {
  return readFileSync(path.join(projectRoot(), "config", "default.json"), "utf8");
}

export async function editConfig<T>(file: string, edit: (raw: RawConfig) => T): Promise<{ result: T; config: Config }> {
  return withFileLock(file, async () => {
    const raw = existsSync(file) && readFileSync(file, "utf8").trim() ? readRawConfig(file) : (JSON.parse(defaultConfigText()) as RawConfig);
    const result = edit(raw);
    const text = `${JSON.stringify(raw, null, 2)}\n`;
    const config = parseConfigText(text, file);
    writeFileAtomic(file, text);
    return { result, config };
  });
}

/** Show a provider's apiKey without revealing it: env references as written, literals masked. */
export function maskSecret(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return value;
  if (/^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(value)) return value;
  return "****";
}
