// The installed gw package's root (where config/default.json lives), found by walking up from
// this module, so it works from src/ (tests) and from dist/src/ (the CLI) alike.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

let cached: string | undefined;

export function projectRoot(): string {
  if (cached) return cached;
  let directory = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(directory, "config", "default.json"))) {
    const parent = path.dirname(directory);
    if (parent === directory) throw new Error("cannot find the gw installation (config/default.json)");
    directory = parent;
  }
  cached = directory;
  return directory;
}

let cachedVersion: string | undefined;

/** gw's version, from its package.json. */
export function gwVersion(): string {
  cachedVersion ??= (JSON.parse(readFileSync(path.join(projectRoot(), "package.json"), "utf8")) as { version: string }).version;
  return cachedVersion;
}
