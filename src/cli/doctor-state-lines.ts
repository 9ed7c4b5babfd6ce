// The lines `gw doctor` prints about a home's state on either driver (doctor-state-checks.ts,
// doctor-redis-state.ts): the drivers, the balances, and the counts the config and metadata
// checks give; never a password or a key.
import type { StateSettings, StorageSettings } from "../config/config-schema.js";
import { readRawConfig } from "../config/load-config.js";
import type { HomePaths } from "../config/paths.js";
import type { Config } from "../config/resolved-config.js";
import type { MetadataData } from "../store/records.js";
import { redactedUrl } from "../store/redis-connection.js";
import { describeBlobs } from "./doctor-blobs-check.js";
import type { BalanceTotals, DoctorCheck } from "./doctor-check-types.js";

export interface HomeState {
  /** The config check: the file, or on Redis the shared document. */
  configCheck: DoctorCheck;
  /** The config the home's servers run; undefined when it cannot be read. */
  config: Config | undefined;
  /** The same as written (`${NAME}` references kept), for the variable checks; undefined when unreadable. */
  raw: Record<string, unknown> | undefined;
  /** drivers, the Redis checks, blobs, metadata, usage, balances. */
  checks(): Promise<DoctorCheck[]>;
  close(): void;
}

export function balancesCheck(totals: BalanceTotals | string): DoctorCheck {
  if (typeof totals === "string") return { name: "balances", status: "error", detail: totals };
  return {
    name: "balances",
    status: "ok",
    detail: `${totals.agents} agents, ${totals.periodCredits} credits used in ${totals.period}, ${totals.lifetimeCredits} lifetime`,
    balances: totals,
  };
}

/** `storage` is undefined when no config could be read (the config check says why). */
export function driversCheck(state: StateSettings, storage: StorageSettings | undefined, paths: HomePaths): DoctorCheck {
  const where = state.driver === "redis" ? `redis (${redactedUrl(state.url ?? "")}, prefix ${state.prefix})` : "embedded";
  const blobs = storage ? describeBlobs(storage, paths.blobsDir) : "unknown (no config read)";
  return { name: "drivers", status: "ok", detail: `state=${where}, blobs=${blobs}` };
}

export function countsOf(config: Config): string {
  return `${Object.keys(config.providers).length} providers, ${config.routes.length} routes, ${config.models.length} models`;
}

export function countsOfMetadata(data: MetadataData): string {
  const active = data.keys.filter((key) => key.revokedAt === null).length;
  return `${data.agents.length} agents, ${data.keys.length} keys (${active} active)`;
}

export function rawOf(file: string): Record<string, unknown> | undefined {
  try {
    return readRawConfig(file);
  } catch {
    return undefined; // unreadable or not JSON: the config check already says so
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
