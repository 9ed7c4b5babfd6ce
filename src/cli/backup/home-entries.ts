// What of a home is gw's: the entries a backup takes and a restore replaces (config.json, data/,
// tls/). Anything else in the home directory (an environment file, the operator's notes, an
// earlier restore's set-aside folder) is never read, moved or deleted by either command.
import path from "node:path";
import { homePaths } from "../../config/paths.js";

/** The layout of paths.ts, relative to the home: names stay right if a location moves there. */
const layout = homePaths(path.resolve(path.sep, "gw-home"));
const relative = (entry: string): string => path.relative(layout.home, entry);

/** Top-level files that are gw's. */
export const GW_FILE_ENTRIES: readonly string[] = [relative(layout.config)];
/** Top-level directories that are gw's, wholly. */
export const GW_DIRECTORY_ENTRIES: readonly string[] = [relative(layout.dataDir), relative(layout.tlsDir)];

export function gwEntryNames(): string[] {
  return [...GW_FILE_ENTRIES, ...GW_DIRECTORY_ENTRIES];
}

/**
 * A path as the archive may name it: relative, `/`-separated, no empty, `.` or `..` segment, no
 * backslash or NUL, and inside one of gw's entries (config.json itself, or a file below data/ or
 * tls/). Anything else could write outside the home or over the operator's own files.
 */
export function isGwArchivePath(name: string): boolean {
  if (name.length === 0 || name.length > 1024 || /[\\\0]/.test(name) || name.startsWith("/")) return false;
  const segments = name.split("/");
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) return false;
  const first = segments[0]!;
  if (GW_FILE_ENTRIES.includes(first)) return segments.length === 1;
  return GW_DIRECTORY_ENTRIES.includes(first) && segments.length > 1;
}
