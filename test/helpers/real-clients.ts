// What the real-client tests share: a gw (in-process) in front of an OpenAI-compatible fake
// (`compat/`) and an Anthropic fake (`claude/`), a key, the usage rows of one endpoint, and a way
// to run a client's CLI as a user would (stdin closed, a temp HOME, none of the developer's
// credentials or proxies, waited on until it exits: ava's timeout is the only bound).
import { spawn } from "node:child_process";
import { statSync } from "node:fs";
import path from "node:path";
import { homePaths } from "../../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../../src/store/usage-log.js";
import { type FakeAnthropic, startFakeAnthropic } from "../fakes/anthropic.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai.js";
import { eventually } from "./eventually.js";
import { addKey, makeHome, projectRoot, startTestGateway, type TestGateway } from "./gateway-harness.js";
import { tempDir } from "./temp-dirs.js";

export const compatModel = "compat/gpt-x";
export const claudeModel = "claude/claude-sonnet-4-5";

export interface ClientRig {
  gateway: TestGateway;
  openai: FakeOpenAI;
  anthropic: FakeAnthropic;
  key: string;
  /** The usage rows written so far for `endpoint` (`responses`, `messages` ...). */
  rows(endpoint: string): UsageRow[];
  /** Waits until `endpoint` has `count` rows (a streamed call's row is written as its stream closes). */
  rowsReach(endpoint: string, count: number): Promise<UsageRow[]>;
  /** Clears what the fakes recorded and queued. */
  reset(): void;
  close(): Promise<void>;
}

/** A gw routing `compat/` to an OpenAI-compatible fake and `claude/` to an Anthropic fake, extra models added as given. */
export async function startClientRig(extraModels: Array<Record<string, unknown>> = []): Promise<ClientRig> {
  const openai = await startFakeOpenAI();
  const anthropic = await startFakeAnthropic();
  const home = await makeHome((config) => {
    config.providers = {
      claude: { type: "anthropic", baseUrl: anthropic.url, apiKey: "sk-ant-upstream" },
      compat: { type: "openai", baseUrl: openai.url, apiKey: "sk-compat" },
    };
    config.routes = [
      { prefix: "claude/", provider: "claude", priority: 10 },
      { prefix: "compat/", provider: "compat", priority: 10 },
    ];
    config.models = [
      { id: claudeModel, name: "Claude", context_length: 200000, pricing: { input_per_mtok: 3, output_per_mtok: 15 } },
      { id: compatModel, name: "GPT X", context_length: 100000, pricing: { input_per_mtok: 3, output_per_mtok: 15 } },
      ...extraModels,
    ];
  });
  const gateway = await startTestGateway(home);
  const key = await addKey(home, "rita", "pro");
  const rows = (endpoint: string) => UsageLog.readRows(homePaths(home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === endpoint);
  return {
    gateway,
    openai,
    anthropic,
    key,
    rows,
    rowsReach: (endpoint, count) => eventually(() => rows(endpoint), { what: `${count} usage rows of ${endpoint}`, until: (found) => found.length >= count }),
    reset() {
      openai.reset();
      anthropic.reset();
    },
    async close() {
      await gateway.shutdown();
      await openai.close();
      await anthropic.close();
    },
  };
}

/**
 * An environment for a client's CLI: PATH and locale from this process, nothing else of it (no
 * OPENAI_/ANTHROPIC_ credentials, no proxies, no real HOME), a fresh temp HOME and TMPDIR, plus `extra`.
 */
export function clientEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const home = tempDir("gw-client-home-");
  const keep = ["PATH", "LANG", "LC_ALL", "TERM"];
  const env: NodeJS.ProcessEnv = { HOME: home, XDG_CONFIG_HOME: `${home}/.config`, XDG_CACHE_HOME: `${home}/.cache`, NO_COLOR: "1" };
  for (const name of keep) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, ...extra };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `command args` with stdin closed and waits for it to exit, however long that takes. */
export function runCli(command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** The result as a readable block, for assertion messages. */
export function describeRun(result: CliResult): string {
  return `exit ${result.code ?? result.signal}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/** The text of a chat message's content, whether a string or text parts (converters may send either). */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: { type?: string; text?: string }) => (part.type === "text" && typeof part.text === "string" ? part.text : "")).join("");
}

/** Codex CLI's launcher script (run it with node), as npm installed it. */
export const codexScript = path.join(projectRoot, "node_modules/@openai/codex/bin/codex.js");

/**
 * Claude Code's native binary, placed first when needed: the package's postinstall (install.cjs)
 * puts the platform package's binary over the bin/claude.exe placeholder, and npm skips it under
 * --ignore-scripts (or an allow-scripts policy).
 */
export async function claudeBinary(): Promise<string> {
  const packageDir = path.join(projectRoot, "node_modules/@anthropic-ai/claude-code");
  const binary = path.join(packageDir, "bin/claude.exe");
  if (statSync(binary).size < 4096) {
    const installed = await runCli(process.execPath, [path.join(packageDir, "install.cjs")], { env: process.env, cwd: packageDir });
    if (installed.code !== 0 || statSync(binary).size < 4096) throw new Error(`install.cjs did not place the claude binary: ${describeRun(installed)}`);
  }
  return binary;
}

/** What keeps Claude Code from reaching anything but its base URL: telemetry, error reporting, the auto-updater, non-essential traffic. */
export const claudeCodeOfflineEnv = {
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_BUG_COMMAND: "1",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
};

/** Codex settings that keep it from reaching api.github.com and chatgpt.com: update checks, analytics, the plugin catalog. */
export const codexOfflineConfig = {
  /** Top-level keys: TOML wants them before the first table. */
  head: ["check_for_update_on_startup = false"],
  tables: ["[analytics]", "enabled = false", "[features]", "plugins = false"],
};
