// With the config shared through Redis (docs/decisions.md §6, §21), each instance's config.json is
// its bootstrap: `server` (this instance's listen address and TLS) and `state` (how to reach Redis)
// stay local, and everything else comes from the shared document. These are read and checked on
// their own, before Redis is reached, so a bad shared document is never blamed on the file.
import { z } from "zod";
import { ConfigError } from "./config-error.js";
import { type StateSettings, serverSchema, stateSchema } from "./config-schema.js";
import { interpolateEnv } from "./interpolate-env.js";
import { parseRawConfig, readConfigText } from "./load-config.js";

/** The top-level sections each instance keeps from its own file; never stored in the shared document. */
export const LOCAL_SECTIONS = ["server", "state"] as const;

export type RawConfig = Record<string, unknown>;

export interface Bootstrap {
  file: string;
  /** The whole file as written (`${ENV}` references kept): what seeds an empty shared config. */
  raw: RawConfig;
  /** The file's `state` section, interpolated and with its defaults. */
  state: StateSettings;
}

const bootstrapSchema = z.object({ server: serverSchema.optional(), state: stateSchema.default(stateSchema.parse({})) });

/** Read the file's local sections; a bad one is a ConfigError naming the file and the field. */
export function readBootstrap(file: string, env: NodeJS.ProcessEnv = process.env): Bootstrap {
  const raw = parseRawConfig(readConfigText(file), file);
  const result = bootstrapSchema.safeParse(interpolateEnv({ server: raw.server, state: raw.state }, env));
  if (!result.success) throw ConfigError.fromZod(result.error, file);
  return { file, raw, state: result.data.state };
}

/** The shared document without the sections that stay local. */
export function withoutLocalSections(raw: RawConfig): RawConfig {
  const shared = { ...raw };
  for (const section of LOCAL_SECTIONS) delete shared[section];
  return shared;
}

/** The config one instance runs: the shared document with this instance's own local sections. */
export function withLocalSections(shared: RawConfig, bootstrap: Bootstrap): RawConfig {
  const effective = withoutLocalSections(shared);
  for (const section of LOCAL_SECTIONS) if (bootstrap.raw[section] !== undefined) effective[section] = bootstrap.raw[section];
  return effective;
}
