// The config a server starts with and where its state lives: this home's config.json, or, when the
// file puts the state on Redis, the document every instance shares (redis-config-store.ts, loaded
// only then).
import { readBootstrap } from "../config/bootstrap-sections.js";
import { type StateInput, type StateSettings, stateSchema } from "../config/config-schema.js";
import { loadConfigFile } from "../config/load-config.js";
import type { Config } from "../config/resolved-config.js";
import type { RedisConfigStore } from "./redis-config-store.js";

export interface ServerConfig {
  config: Config;
  /** Where the state lives: the file's `state` section, or the test seam's. */
  state: StateSettings;
  /** The shared config the server follows, when the state is on Redis; the file otherwise. */
  shared?: RedisConfigStore;
}

/**
 * The config a server starts with. On the embedded state: the file. On Redis: the shared document
 * (seeded from the file when Redis has none) with the file's `server` and `state` sections; an
 * invalid shared document refuses to start, naming the field.
 */
export async function openServerConfig(file: string, stateOverride: StateInput | undefined, log: { info(message: string): void }): Promise<ServerConfig> {
  const bootstrap = readBootstrap(file);
  const state = stateOverride ? stateSchema.parse(stateOverride) : bootstrap.state;
  if (state.driver !== "redis") return { config: loadConfigFile(file), state };
  // ioredis loads only for a Redis state: the embedded default never pays for it.
  const { RedisConfigStore } = await import("./redis-config-store.js");
  const shared = await RedisConfigStore.connect({ ...bootstrap, state });
  try {
    const { config, seeded } = await shared.load();
    log.info(`${seeded ? `seeded the shared config (${shared.label}) from ${file}; ` : ""}config from ${shared.label}; server and state stay as ${file} says`);
    return { config, state, shared };
  } catch (error) {
    await shared.close();
    throw error;
  }
}
