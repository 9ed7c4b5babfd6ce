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

export async function findFfmpeg(env: NodeJS.ProcessEnv = process.env): Promise<EngineInfo | null> {
  const candidates: Array<() => Promise<{ path: string; source: EngineSource } | null>> = [
    async () => (env.GW_FFMPEG_PATH ? { path: env.GW_FFMPEG_PATH, source: "GW_FFMPEG_PATH" } : null),
    async () => fromPackage("ffmpeg-static", "ffmpeg-static"),
    async () => fromPackage("@ffmpeg-installer/ffmpeg", "@ffmpeg-installer/ffmpeg"),
    async () => fromPath("ffmpeg", env),
  ];
  for (const candidate of candidates) {
    const found = await candidate();
    if (!found || !isExecutable(found.path)) continue;
    const version = await probeVersion(found.path, ["-version"], /ffmpeg version (\S+)/);
    if (version !== null) return { ...found, version };
  }
  return null;
}

/**
 * ffprobe: GW_FFPROBE_PATH, then the `ffprobe` in the directory of the ffmpeg findFfmpeg resolves
 * (the two ship together, so versions match), then `ffprobe` on PATH.
 */
export async function findFfprobe(env: NodeJS.ProcessEnv = process.env): Promise<EngineInfo | null> {
  const executable = process.platform === "win32" ? "ffprobe.exe" : "ffprobe";
  const candidates: Array<() => Promise<{ path: string; source: EngineSource } | null>> = [
    async () => (env.GW_FFPROBE_PATH ? { path: env.GW_FFPROBE_PATH, source: "GW_FFPROBE_PATH" } : null),
    async () => {
      const ffmpeg = await findFfmpeg(env);
      return ffmpeg ? { path: path.join(path.dirname(ffmpeg.path), executable), source: "beside ffmpeg" } : null;
    },
    async () => fromPath("ffprobe", env),
  ];
  for (const candidate of candidates) {
    const found = await candidate();
    if (!found || !isExecutable(found.path)) continue;
    const version = await probeVersion(found.path, ["-version"], /ffprobe version (\S+)/);
    if (version !== null) return { ...found, version };
  }
  return null;
}

export async function findEspeak(env: NodeJS.ProcessEnv = process.env): Promise<EngineInfo | null> {
  return findOnPath(["espeak-ng"], ["--version"], /text-to-speech:\s*(\S+)/, env);
}

export async function findTesseract(env: NodeJS.ProcessEnv = process.env): Promise<EngineInfo | null> {
  return findOnPath(["tesseract"], ["--version"], /tesseract\s+v?(\S+)/i, env);
}

async function findOnPath(names: string[], versionArgs: string[], pattern: RegExp, env: NodeJS.ProcessEnv): Promise<EngineInfo | null> {
  for (const name of names) {
    const found = fromPath(name, env);
    if (!found) continue;
    const version = await probeVersion(found.path, versionArgs, pattern);
    if (version !== null) return { ...found, version };
  }
  return null;
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

/** Run `binary versionArgs` and read its version; null when the binary does not run. */
function probeVersion(binary: string, versionArgs: string[], pattern: RegExp): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(binary, versionArgs, { timeout: 5_000, windowsHide: true }, (error, stdout, stderr) => {
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
