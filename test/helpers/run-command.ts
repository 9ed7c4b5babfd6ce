// Run a command to its end and keep what it printed: the walk-throughs (README, docs/deploy.md)
// run their documents' blocks this way. `hangMs` is a hang guard, not a speed check: a command
// still running then is killed and says so in its stderr.
import { spawn } from "node:child_process";

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCommand(command: string, args: string[], options: { env: Record<string, string>; cwd: string; hangMs: number }): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${options.hangMs} ms]`;
      child.kill("SIGKILL");
    }, options.hangMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
