// Start a real gw server for a test: a fresh temp home, config edited by the test, keys created
// through the same provisioning code the CLI uses. In-process (fast) or as a `gw serve`
// subprocess (when the test is about the process itself).

import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import type { StateInput } from "../../src/config/config-schema.js";
import { initHome } from "../../src/config/init-home.js";
import { homePaths } from "../../src/config/paths.js";
import type { UrlFetcher } from "../../src/gateway/media/picture-input.js";
import type { AccessRecord, ServerLogger } from "../../src/server/server-logger.js";
import { type RunningServer, startServer } from "../../src/server/start-server.js";
import { MetadataStore } from "../../src/store/metadata-store.js";
import { createKey } from "../../src/store/provisioning.js";
import type { KeyLimits } from "../../src/store/records.js";
import { eventually } from "./eventually.js";
import { tempDir } from "./temp-dirs.js";

export const projectRoot = path.resolve(import.meta.dirname, "../..");
export const gwBin = path.join(projectRoot, "bin/run.js");

export type RawConfig = Record<string, any>;

/** A home whose only provider is an OpenAI-compatible fake, routed by prefix `fake/` (removed when the test process ends). */
export async function makeHome(edit?: (config: RawConfig) => void): Promise<string> {
  const home = tempDir("gw-test-");
  await initHome(home);
  const file = homePaths(home).config;
  const config = JSON.parse(readFileSync(file, "utf8")) as RawConfig;
  config.providers = {};
  config.routes = [];
  config.models = [];
  edit?.(config);
  writeFileSync(file, JSON.stringify(config, null, 2));
  return home;
}

export function editHomeConfig(home: string, edit: (config: RawConfig) => void): void {
  const file = homePaths(home).config;
  const config = JSON.parse(readFileSync(file, "utf8")) as RawConfig;
  edit(config);
  writeFileSync(file, JSON.stringify(config, null, 2));
}

/** A new key for `agent` (created on `plan` when missing), with the key's own limits when given. */
export async function addKey(home: string, agent: string, plan = "pro", limits: KeyLimits = {}): Promise<string> {
  const store = await MetadataStore.open(homePaths(home).metadata);
  try {
    return (await createKey(store, agent, plan, "free", limits)).key;
  } finally {
    store.close();
  }
}

export const quietLogger: ServerLogger & { lines: string[]; accessRecords: AccessRecord[] } = Object.assign(
  {
    lines: [] as string[],
    accessRecords: [] as AccessRecord[],
  },
  {
    info(message: string) {
      quietLogger.lines.push(`info ${message}`);
    },
    warn(message: string) {
      quietLogger.lines.push(`warn ${message}`);
    },
    error(error: unknown) {
      quietLogger.lines.push(`error ${error instanceof Error ? error.stack : String(error)}`);
    },
    access(record: AccessRecord) {
      quietLogger.accessRecords.push(record);
    },
  },
);

/** The access record of a request (quietLogger's), once its response has closed. */
export async function accessOf(requestId: string): Promise<AccessRecord> {
  const record = await eventually(() => quietLogger.accessRecords.find((entry) => entry.requestId === requestId), `the access record of ${requestId}`);
  return record!;
}

export interface TestGateway extends RunningServer {
  home: string;
  /** Base URL for OpenAI SDK clients: `${url}/v1`. */
  v1: string;
}

export async function startTestGateway(
  home: string,
  options: { fetchUrl?: UrlFetcher; clock?: () => number; now?: () => number; state?: StateInput } = {},
): Promise<TestGateway> {
  const server = await startServer({ home, host: "127.0.0.1", port: 0, logger: quietLogger, ...options });
  return Object.assign(server, { home, v1: `${server.url}/v1` });
}

export { gw, json } from "../_gw-cli.js";

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** `gw serve --port 0` as a subprocess (http or, given --https, https); resolves once it printed its listening line. */
export async function spawnServe(home: string, extraArgs: string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [gwBin, "serve", "--home", home, "--port", "0", ...extraArgs], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    // "close", not "exit": only then has everything it wrote on stderr been read.
    child.once("close", (code) => reject(new Error(`gw serve exited ${code}: ${stderr}`)));
  });
  const match = /^listening on (https?:\/\/\S+)$/.exec(first);
  if (!match) throw new Error(`unexpected first line: ${first}`);
  return { url: match[1]!, child, stderr: () => stderr, exited };
}
