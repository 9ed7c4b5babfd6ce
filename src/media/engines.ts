// Local media engines from the OS or from npm packages: where each binary is and its version.
// ffmpeg is resolved in the order of docs/decisions.md §6: GW_FFMPEG_PATH, ffmpeg-static, @ffmpeg-installer/ffmpeg,
// then `ffmpeg` on PATH. The npm packages are optional and may be absent (ffmpeg-static needs the
// network at install time), so they are imported dynamically and any failure means "not there".
import { execFile } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

export type EngineSource = "GW_FFMPEG_PATH" | "GW_FFPROBE_PATH" | "ffmpeg-static" | "@ffmpeg-installer/ffmpeg" | "beside ffmpeg" | "PATH";

export interface EngineInfo {
  path: string;
  /** The version the binary reports (first line of its version output, trimmed to the number when found). */
  version: string;
  source: EngineSource;
}

/**
 * What looking for an engine found: the binary and its version; nothing that runs (`missing`: not
 * there, not executable, or it exits with an error and says nothing); or a binary that did not
 * answer its version check in time (`slow`: it is there, the machine is busy; ask again later).
 */
export type EngineLookup = { status: "found"; engine: EngineInfo } | { status: "missing" } | { status: "slow"; path: string; timeoutMs: number };

export interface EngineLookupOptions {
  /** How long one version check may take (default VERSION_CHECK_TIMEOUT_MS). */
  versionTimeoutMs?: number;
}

/**
 * A version check runs once per binary and is then remembered, so it can afford to wait: on a
 * loaded machine starting ffprobe has been seen to take over 5 s, and a short budget reported a
 * busy engine as a missing one.
 */
export const VERSION_CHECK_TIMEOUT_MS = 60_000;

type Candidate = () => Promise<{ path: string; source: EngineSource } | null>;

export async function lookupFfmpeg(env: NodeJS.ProcessEnv = process.env, options: EngineLookupOptions = {}): Promise<EngineLookup> {
  return lookupCandidates(
    [
      async () => (env.GW_FFMPEG_PATH ? { path: env.GW_FFMPEG_PATH, source: "GW_FFMPEG_PATH" } : null),
      async () => fromPackage("ffmpeg-static", "ffmpeg-static"),
      async () => fromPackage("@ffmpeg-installer/ffmpeg", "@ffmpeg-installer/ffmpeg"),
      async () => fromPath("ffmpeg", env),
    ],
    ["-version"],
    /ffmpeg version (\S+)/,
    options,
  );
}

/**
 * ffprobe: GW_FFPROBE_PATH, then the `ffprobe` in the directory of the ffmpeg lookupFfmpeg resolves
 * (the two ship together, so versions match), then `ffprobe` on PATH.
 */
export async function lookupFfprobe(env: NodeJS.ProcessEnv = process.env, options: EngineLookupOptions = {}): Promise<EngineLookup> {
  const executable = process.platform === "win32" ? "ffprobe.exe" : "ffprobe";
  return lookupCandidates(
    [
      async () => (env.GW_FFPROBE_PATH ? { path: env.GW_FFPROBE_PATH, source: "GW_FFPROBE_PATH" } : null),
      async () => {
        const ffmpeg = await lookupFfmpeg(env, options);
        // A slow ffmpeg is still where it is: its ffprobe is looked for beside it.
        const ffmpegPath = ffmpeg.status === "found" ? ffmpeg.engine.path : ffmpeg.status === "slow" ? ffmpeg.path : null;
        return ffmpegPath ? { path: path.join(path.dirname(ffmpegPath), executable), source: "beside ffmpeg" } : null;
      },
      async () => fromPath("ffprobe", env),
    ],
    ["-version"],
    /ffprobe version (\S+)/,
    options,
  );
}

export async function lookupEspeak(env: NodeJS.ProcessEnv = process.env, options: EngineLookupOptions = {}): Promise<EngineLookup> {
  return lookupCandidates([async () => fromPath("espeak-ng", env)], ["--version"], /text-to-speech:\s*(\S+)/, options);
}

export async function lookupTesseract(env: NodeJS.ProcessEnv = process.env, options: EngineLookupOptions = {}): Promise<EngineLookup> {
  return lookupCandidates([async () => fromPath("tesseract", env)], ["--version"], /tesseract\s+v?(\S+)/i, options);
}

/** What a slow lookup means, for a client or the log (never a path: clients see it). */
export function slowEngineMessage(name: string, timeoutMs: number): string {
  return `${name} did not answer its version check in time (${Math.round(timeoutMs / 100) / 10} s): the server is busy; try again shortly`;
}

// The find* forms answer found-or-not, for callers that only ask whether an engine answered (tests):
// the server and gw doctor use the lookups, which tell a slow engine from a missing one.
export async function findFfmpeg(env: NodeJS.ProcessEnv = process.env): Promise<EngineInfo | null> {
  return foundOrNull(await lookupFfmpeg(env));
}

export async function findFfprobe(env: NodeJS.ProcessEnv = process.env): Promise<EngineInfo | null> {
  return foundOrNull(await lookupFfprobe(env));
}

export async function findEspeak(env: NodeJS.ProcessEnv = process.env): Promise<EngineInfo | null> {
  return foundOrNull(await lookupEspeak(env));
}

export async function findTesseract(env: NodeJS.ProcessEnv = process.env): Promise<EngineInfo | null> {
  return foundOrNull(await lookupTesseract(env));
}

function foundOrNull(lookup: EngineLookup): EngineInfo | null {
  return lookup.status === "found" ? lookup.engine : null;
}

/** The first candidate that runs; a slow one ends the search (it is there, and a later one would be a different binary). */
async function lookupCandidates(candidates: Candidate[], versionArgs: string[], pattern: RegExp, options: EngineLookupOptions): Promise<EngineLookup> {
  const timeoutMs = options.versionTimeoutMs ?? VERSION_CHECK_TIMEOUT_MS;
  for (const candidate of candidates) {
    const found = await candidate();
    if (!found || !isExecutable(found.path)) continue;
    const version = await probeVersion(found.path, versionArgs, pattern, timeoutMs);
    if (version === "slow") return { status: "slow", path: found.path, timeoutMs };
    if (version !== null) return { status: "found", engine: { ...found, version } };
  }
  return { status: "missing" };
}

/** The binary path an optional npm package exports, when the package and its binary exist. */
async function fromPackage(specifier: string, source: EngineSource): Promise<{ path: string; source: EngineSource } | null> {
  let loaded: unknown;
  try {
    // A variable specifier keeps TypeScript from requiring the optional package at build time.
    const name: string = specifier;
    loaded = await import(name);
  } catch {
    return null;
  }
  const exported = isRecord(loaded) ? (loaded.default ?? loaded) : loaded;
  const binary = typeof exported === "string" ? exported : isRecord(exported) && typeof exported.path === "string" ? exported.path : null;
  return binary ? { path: binary, source } : null;
}

function fromPath(name: string, env: NodeJS.ProcessEnv): { path: string; source: EngineSource } | null {
  const extensions = process.platform === "win32" ? (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";") : [""];
  for (const directory of (env.PATH ?? "").split(path.delimiter)) {
    if (!directory) continue;
    for (const extension of extensions) {
      const candidate = path.join(directory, name + extension);
      if (isExecutable(candidate)) return { path: candidate, source: "PATH" };
    }
  }
  return null;
}

function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Run `binary versionArgs` and read its version; null when the binary does not run, "slow" when it did not answer in time. */
function probeVersion(binary: string, versionArgs: string[], pattern: RegExp, timeoutMs: number): Promise<string | null | "slow"> {
  return new Promise((resolve) => {
    execFile(binary, versionArgs, { timeout: timeoutMs, windowsHide: true }, (error, stdout, stderr) => {
      // Killed by the deadline: it is there but busy, which is not the same as absent.
      if (error?.killed) return resolve("slow");
      // Some engines (older tesseract) print their version on stderr.
      const output = `${stdout}\n${stderr}`.trim();
      if (error && !output) return resolve(null);
      if (error && (error as NodeJS.ErrnoException).code === "ENOENT") return resolve(null);
      const match = pattern.exec(output);
      const firstLine = (output.split("\n")[0] ?? "").trim();
      resolve(match?.[1] ?? (firstLine || "unknown"));
    });
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
