// The start-up fast path (bin/run.js): `gw --version`, `gw serve` and the everyday listings answer without
// loading oclif, whose import and config load cost ~200 ms of every start (docs/benchmarks.md, "CLI
// start-up"). It takes only a command line oclif would parse the same way: the command's words,
// then its known flags as `--name value`, `--name=value` or `--name` (booleans), each at most once,
// values that are not empty and do not start with `-`. Anything else (help, an unknown or
// repeated flag, an argument, `--`), and any setting that changes what oclif prints (DEBUG,
// GW_CONTENT_TYPE, a user plugin or theme), goes to oclif, which answers as it always has.
// The commands' work is shared with their oclif classes; failures are told by the same function.
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { CommandOutcome } from "./command-outcome.js";
import type { ServeFlags } from "./serve-command.js";

export type FastFlagType = "boolean" | "string";

/** The flags as the fast path parsed them: a string flag's value, or true for a boolean given. */
export class FastFlags {
  constructor(private readonly values: ReadonlyMap<string, string | true>) {}

  string(name: string): string | undefined {
    const value = this.values.get(name);
    return typeof value === "string" ? value : undefined;
  }

  /** Booleans default to false, as every boolean flag of the fast commands does. */
  boolean(name: string): boolean {
    return this.values.get(name) === true;
  }
}

export interface FastCommand {
  /** Every flag the oclif command takes, base flags included (test/cli-fast-path.test.ts compares). */
  flags: Readonly<Record<string, FastFlagType>>;
  run(flags: FastFlags): Promise<CommandOutcome<unknown>>;
}

/** The commands answered here, by their words. Each one's module is imported only when it runs. */
export const FAST_COMMANDS: Readonly<Record<string, FastCommand>> = {
  "keys list": {
    flags: { home: "string", agent: "string", revoked: "boolean", json: "boolean", url: "string", "admin-token": "string" },
    async run(flags) {
      const { keysList } = await import("./keys-list.js");
      return keysList({
        home: flags.string("home"),
        agent: flags.string("agent"),
        revoked: flags.boolean("revoked"),
        json: flags.boolean("json"),
        url: flags.string("url"),
        "admin-token": flags.string("admin-token"),
      });
    },
  },
  models: {
    flags: { home: "string", json: "boolean", "api-key": "string", "base-url": "string" },
    async run(flags) {
      const { modelsList } = await import("./models-list.js");
      return modelsList({ home: flags.string("home"), "api-key": flags.string("api-key"), "base-url": flags.string("base-url") });
    },
  },
};

/**
 * Answer `argv` here when it is one the fast path takes, and say whether it did; false leaves it
 * to oclif. `root` is the package's folder (package.json).
 */
export async function runFast(argv: readonly string[], root: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (argv[0] === "--version") return oclifPrintsPlainly(env) && printVersion(root);
  if (argv[0] === "serve") {
    const flags = serveFlags(argv.slice(1));
    if (!flags || !oclifPrintsPlainly(env)) return false;
    await runServe(flags);
    return true;
  }
  for (const [words, command] of Object.entries(FAST_COMMANDS)) {
    const id = words.split(" ");
    if (!id.every((word, index) => argv[index] === word)) continue;
    const flags = parseFlags(argv.slice(id.length), command.flags);
    if (!flags || !oclifPrintsPlainly(env)) return false;
    await runCommand(command, flags);
    return true;
  }
  return false;
}

/** `gw serve`'s flags (test/cli-fast-path.test.ts compares them with the oclif command's). */
export const SERVE_FLAGS: Readonly<Record<string, FastFlagType>> = {
  home: "string",
  init: "boolean",
  host: "string",
  port: "string",
  https: "boolean",
  "tls-cert": "string",
  "tls-key": "string",
  "log-level": "string",
  "log-format": "string",
};
/** server-logger.ts's LOG_LEVELS and formats, written out: importing them would load pino here (the test compares). */
export const LOG_LEVEL_VALUES: readonly string[] = ["trace", "debug", "info", "warn", "error", "silent"];
const LOG_FORMAT_VALUES: readonly string[] = ["json", "pretty"];

/**
 * `gw serve`'s flags as the oclif command would take them, or undefined for a line whose values
 * oclif would refuse (a port that is not an integer from 0 to 65535, a log level or format it does
 * not list): oclif then answers with its own message.
 */
export function serveFlags(tokens: readonly string[]): ServeFlags | undefined {
  const flags = parseFlags(tokens, SERVE_FLAGS);
  if (!flags) return undefined;
  const port = flags.string("port");
  if (port !== undefined && (!/^\d{1,5}$/.test(port) || Number(port) > 65535)) return undefined;
  const level = flags.string("log-level") ?? "info";
  const format = flags.string("log-format");
  if (!LOG_LEVEL_VALUES.includes(level) || (format !== undefined && !LOG_FORMAT_VALUES.includes(format))) return undefined;
  return {
    home: flags.string("home"),
    init: flags.boolean("init"),
    host: flags.string("host"),
    port: port === undefined ? undefined : Number(port),
    https: flags.boolean("https"),
    "tls-cert": flags.string("tls-cert"),
    "tls-key": flags.string("tls-key"),
    "log-level": level as ServeFlags["log-level"],
    "log-format": format as ServeFlags["log-format"],
  };
}

/** `gw serve` without oclif: a server never pays for the CLI's command tree, plugins and parser. */
async function runServe(flags: ServeFlags): Promise<void> {
  const [{ exitQuietlyOnBrokenPipe }, { serve }] = await Promise.all([import("./output.js"), import("./serve-command.js")]);
  exitQuietlyOnBrokenPipe();
  // Resolves only for a start that was refused (its reason on stderr), as the oclif command exits.
  process.exitCode = await serve(flags);
}

/** The flags, or undefined when the line is not one the fast path takes (see the top of this file). */
export function parseFlags(tokens: readonly string[], known: Readonly<Record<string, FastFlagType>>): FastFlags | undefined {
  const values = new Map<string, string | true>();
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index] ?? "";
    if (!token.startsWith("--") || token === "--") return undefined;
    const equals = token.indexOf("=");
    const name = token.slice(2, equals === -1 ? undefined : equals);
    if (!Object.hasOwn(known, name) || values.has(name)) return undefined;
    if (known[name] === "boolean") {
      if (equals !== -1) return undefined;
      values.set(name, true);
      continue;
    }
    const value = equals === -1 ? tokens[++index] : token.slice(equals + 1);
    if (value === undefined || value === "" || value.startsWith("-")) return undefined;
    values.set(name, value);
  }
  return new FastFlags(values);
}

/** As the oclif command runs: the result drawn for people, or printed as oclif prints JSON; a failure as GwCommand tells it. */
async function runCommand(command: FastCommand, flags: FastFlags): Promise<void> {
  const [{ exitQuietlyOnBrokenPipe }, { reportFailure }] = await Promise.all([import("./output.js"), import("./command-failure.js")]);
  exitQuietlyOnBrokenPipe();
  let outcome: CommandOutcome<unknown>;
  try {
    outcome = await command.run(flags);
    if (!flags.boolean("json")) await outcome.view();
  } catch (error) {
    reportFailure(error as Error);
    return;
  }
  // oclif's logJson: two-space JSON and a newline (no colours without a theme, which sends the line to oclif).
  if (outcome.result && flags.boolean("json")) console.log(JSON.stringify(outcome.result, null, 2));
}

/** oclif's `--version` line: `gw/0.1.0 linux-x64 node-v20.19.0` (its userAgent). */
function printVersion(root: string): boolean {
  // oclif says `wsl` for the platform under Windows' Linux; it knows how to tell, so it answers there.
  if (mightBeWsl()) return false;
  const pjson = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { name: string; version?: string };
  const arch = os.arch() === "ia32" ? "x86" : os.arch();
  console.log(`${pjson.name}/${pjson.version || "0.0.0"} ${os.platform()}-${arch} node-${process.version}`);
  return true;
}

function mightBeWsl(): boolean {
  if (process.platform !== "linux") return false;
  if (os.release().toLowerCase().includes("microsoft")) return true;
  try {
    return readFileSync("/proc/version", "utf8").toLowerCase().includes("microsoft");
  } catch {
    return false;
  }
}

/**
 * Whether oclif would print what the fast path prints: no debug output, no JSON forced by the
 * environment, and none of the files a user may add to change it (a user plugin can add hooks or
 * replace a command; a theme colours JSON). Paths as oclif's Config computes them.
 */
function oclifPrintsPlainly(env: NodeJS.ProcessEnv): boolean {
  if (process.platform === "win32" || env.DEBUG || env.GW_DEBUG || env.GW_CONTENT_TYPE) return false;
  const home = env.HOME || os.homedir() || os.tmpdir();
  const dataDir = env.GW_DATA_DIR || path.join(env.XDG_DATA_HOME || path.join(home, ".local", "share"), "gw");
  const configDir = env.GW_CONFIG_DIR || path.join(env.XDG_CONFIG_HOME || path.join(home, ".config"), "gw");
  return !existsSync(path.join(dataDir, "package.json")) && !existsSync(path.join(configDir, "theme.json"));
}
