// Runs the built `gw` (bin/run.js -> dist/commands) as a user would, in a subprocess.
import { execFile, type ExecFileException } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../bin/run.js", import.meta.url));

export interface GwResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface GwOptions {
  home?: string;
  env?: Record<string, string | undefined>;
  input?: string;
}

export function gw(args: string[], options: GwOptions = {}): Promise<GwResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, GW_API_KEY: undefined, GW_BASE_URL: undefined, ...options.env };
  if (options.home) env.GW_HOME = options.home;
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [bin, ...args], { env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error: ExecFileException | null, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(options.input ?? "");
  });
}

/** Parse stdout as JSON, failing with the output when it is not. */
export function json<T = unknown>(result: GwResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}

export function tempHome(): string {
  return mkdtempSync(path.join(os.tmpdir(), "gw-cli-"));
}
