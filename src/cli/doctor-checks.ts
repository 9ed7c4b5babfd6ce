// `gw doctor`: what this machine and this home can run. A broken config or data dir is an error,
// and so is a `${NAME}` the environment does not set (an upstream would get no key) or a provider
// `type` gw does not implement (the server skips that provider); a missing
// media engine is a warning (the endpoints that need it answer 503 instead), and so is one that
// did not answer its version check in time (installed but slow: told apart from missing, as the
// server does), and so are routable models billed at the default price. The home's state (its
// drivers, Redis, the blob store, agents, usage and balances) is doctor-state-checks.ts's.
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { defaultPricedModels, defaultPricedPrefixes, formatPrice } from "../config/default-pricing.js";
import { describeUnsetVariable, envVariableUses } from "../config/env-references.js";
import { homePaths } from "../config/paths.js";
import type { Config } from "../config/resolved-config.js";
import { describeUnknownProviderType, unknownProviderTypes } from "../config/unknown-provider-types.js";
import { type EngineLookup, type EngineLookupOptions, lookupEspeak, lookupFfmpeg, lookupFfprobe, lookupTesseract } from "../media/engines.js";
import type { DoctorCheck, DoctorReport } from "./doctor-check-types.js";
import { openHomeState } from "./doctor-state-checks.js";
import { telemetryCheck } from "./doctor-telemetry-check.js";
import { tlsCheck } from "./doctor-tls-check.js";
import { implementedProviderTypes } from "./provider-types.js";

const MINIMUM_NODE = [20, 19] as const;

/** `engines` is for tests: how long a version check may take (default: engines.ts's VERSION_CHECK_TIMEOUT_MS). */
export async function runDoctor(home: string, env: NodeJS.ProcessEnv = process.env, engines: EngineLookupOptions = {}): Promise<DoctorReport> {
  const [ffmpeg, ffprobe, espeak, tesseract] = await Promise.all([
    lookupFfmpeg(env, engines),
    lookupFfprobe(env, engines),
    lookupEspeak(env, engines),
    lookupTesseract(env, engines),
  ]);
  const checks: DoctorCheck[] = [
    nodeCheck(),
    ffmpegCheck(ffmpeg, env),
    engineCheck("ffprobe", ffprobe, "transcription cannot check or measure audio, and speech cannot report its duration; install ffmpeg (it ships ffprobe)"),
    engineCheck("espeak-ng", espeak, "local speech (local/espeak) is unavailable; install espeak-ng"),
    engineCheck("tesseract", tesseract, "local OCR (local/tesseract) is unavailable; install tesseract-ocr"),
    ...(await homeChecks(home, env)),
  ];
  return { ok: checks.every((check) => check.status !== "error"), home, checks };
}

function nodeCheck(): DoctorCheck {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  const [needMajor, needMinor] = MINIMUM_NODE;
  const ok = major > needMajor || (major === needMajor && minor >= needMinor);
  return {
    name: "node",
    status: ok ? "ok" : "error",
    version: process.versions.node,
    detail: ok ? `node ${process.versions.node}` : `node ${process.versions.node} is too old: gw needs >= ${needMajor}.${needMinor}`,
  };
}

function ffmpegCheck(ffmpeg: EngineLookup, env: NodeJS.ProcessEnv): DoctorCheck {
  const check = engineCheck("ffmpeg", ffmpeg, "audio/video transcoding and local video jobs are unavailable; install ffmpeg or set GW_FFMPEG_PATH");
  const usesOverride = ffmpeg.status === "found" ? ffmpeg.engine.source === "GW_FFMPEG_PATH" : ffmpeg.status === "slow" && ffmpeg.path === env.GW_FFMPEG_PATH;
  if (env.GW_FFMPEG_PATH && !usesOverride) {
    check.status = "warn";
    check.detail = `GW_FFMPEG_PATH=${env.GW_FFMPEG_PATH} is not a working ffmpeg; ${ffmpeg.status === "found" ? `using ${check.detail}` : check.detail}`;
  }
  return check;
}

function engineCheck(name: string, lookup: EngineLookup, missing: string): DoctorCheck {
  if (lookup.status === "missing") return { name, status: "warn", detail: `not found: ${missing}` };
  if (lookup.status === "slow") {
    const seconds = Math.round(lookup.timeoutMs / 100) / 10;
    return {
      name,
      status: "warn",
      path: lookup.path,
      detail: `answered slowly: ${lookup.path} is installed but did not answer its version check within ${seconds} s (a busy machine?); until it does, calls that need it answer 503 engine_busy; run gw doctor again`,
    };
  }
  const engine = lookup.engine;
  return {
    name,
    status: "ok",
    path: engine.path,
    version: engine.version,
    source: engine.source,
    detail: `${engine.version} (${engine.source}: ${engine.path})`,
  };
}

async function homeChecks(home: string, env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  const paths = homePaths(home);
  // The config the home's servers run, and where their state is (a Redis is connected here).
  const state = await openHomeState(paths, env);
  try {
    const checks: DoctorCheck[] = [state.configCheck];
    // From the raw config, so an unset variable is named even when it is what breaks the config.
    checks.push(...envChecks(state.raw, env));
    if (state.config) checks.push(pricingCheck(state.config), await providerTypesCheck(state.config));
    const traces = state.config && telemetryCheck(state.config.telemetry);
    if (traces) checks.push(traces);
    checks.push(dataDirCheck(paths.dataDir), ...(await state.checks()));
    if (existsSync(paths.tlsCert)) checks.push(tlsCheck(paths.tlsCert, paths.tlsKey, new Date()));
    return checks;
  } finally {
    state.close();
  }
}

function dataDirCheck(dataDir: string): DoctorCheck {
  try {
    if (!statSync(dataDir).isDirectory()) throw new Error(`${dataDir} is not a directory`);
    accessSync(dataDir, constants.R_OK | constants.W_OK);
    return { name: "data dir", status: "ok", path: dataDir, detail: `${dataDir} is writable` };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const detail = code === "ENOENT" ? `${dataDir} does not exist (run \`gw init\`)` : code === "EACCES" ? `${dataDir} is not writable` : messageOf(error);
    return { name: "data dir", status: "error", path: dataDir, detail };
  }
}

/** One check per `${NAME}` the config uses: ok when set (its value is never shown), else an error. */
function envChecks(raw: Record<string, unknown> | undefined, env: NodeJS.ProcessEnv): DoctorCheck[] {
  if (raw === undefined) return []; // unreadable or not JSON: the config check already says so
  return envVariableUses(raw, env).map((use) => ({
    name: `env ${use.name}`,
    status: use.set ? "ok" : "error",
    detail: use.set ? `${use.name} is set (used by ${use.paths.join(", ")})` : describeUnsetVariable(use),
  }));
}

function pricingCheck(config: Config): DoctorCheck {
  const fallback = `the default ${formatPrice(config.billing.defaultChatPricing)} per million input/output tokens (billing.defaultChatPricing)`;
  const prefixes = defaultPricedPrefixes(config).join(", ");
  const models = defaultPricedModels(config);
  if (models.length === 0) {
    const detail = prefixes
      ? `every routable model in models[] has a price; a model under ${prefixes} without an entry is billed at ${fallback}`
      : "every routable model has a price";
    return { name: "pricing", status: "ok", detail, models };
  }
  const unlisted = prefixes ? `; so is any model under ${prefixes} without an entry` : "";
  return {
    name: "pricing",
    status: "warn",
    detail: `routable models billed at ${fallback} for lack of a price in models[]: ${models.join(", ")}${unlisted}`,
    models,
  };
}

/** A provider of a type gw does not implement is skipped by the server: an error naming it and the known types. */
async function providerTypesCheck(config: Config): Promise<DoctorCheck> {
  const known = [...(await implementedProviderTypes()).keys()].sort();
  const unknown = unknownProviderTypes(config, known);
  if (unknown.length === 0) return { name: "provider types", status: "ok", detail: `every provider's type is one gw implements (${known.join(", ")})` };
  return { name: "provider types", status: "error", detail: unknown.map((entry) => describeUnknownProviderType(entry, known)).join(" ") };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
