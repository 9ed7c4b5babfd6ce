// Runs the built `gw` (bin/run.js -> dist/commands) as a user would, in a subprocess.
import { type ExecFileException, execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { tempDir } from "./helpers/temp-dirs.js";

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
  /** Working directory of the subprocess (default: this process's). */
  cwd?: string;
}

export function gw(args: string[], options: GwOptions = {}): Promise<GwResult> {
  return runNode([bin, ...args], options);
}

/** `node` with these arguments, in the environment a user's shell gives `gw`. */
export function runNode(nodeArgs: string[], options: GwOptions = {}): Promise<GwResult> {
  // ava sets NODE_ENV=test, which makes oclif try to load the TypeScript sources through tsx/ts-node
  // (three times slower); a user's shell runs the built commands.
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: undefined, GW_API_KEY: undefined, GW_BASE_URL: undefined, ...options.env };
  if (options.home) env.GW_HOME = options.home;
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      nodeArgs,
      { env, cwd: options.cwd, timeout: 120_000, maxBuffer: 16 * 1024 * 1024, encoding: "utf8" },
      (error: ExecFileException | null, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
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

const homes: string[] = [];

export function tempHome(): string {
  const home = tempDir("gw-cli-");
  homes.push(home);
  return home;
}

export function removeTempHomes(): void {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
}
