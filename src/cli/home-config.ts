// The home's config as commands read and edit it, wherever it lives: config.json, or, when the
// file's `state` section says redis, the document every instance on that Redis shares (the file
// then keeps only its own `server` and `state`; docs/decisions.md §6, §21). The choice is made
// here rather than in config/config-file.ts so that src/config never imports src/store, which
// already imports src/config.
import { existsSync, readFileSync } from "node:fs";
import { type Bootstrap, readBootstrap } from "../config/bootstrap-sections.js";
import { editConfig, type RawConfig } from "../config/config-file.js";
import { loadConfigFile, readRawConfig } from "../config/load-config.js";
import type { HomePaths } from "../config/paths.js";
import type { Config } from "../config/resolved-config.js";
import type { RedisConfigStore } from "../store/redis-config-store.js";
import { CliError } from "./cli-error.js";

/** Change the home's config (validated as a whole; an invalid result is refused naming the field, nothing written). */
export async function editHomeConfig<T>(paths: HomePaths, edit: (raw: RawConfig) => T): Promise<{ result: T; config: Config }> {
  const bootstrap = sharedConfigBootstrap(paths);
  if (!bootstrap) return editConfig(paths.config, edit);
  return withSharedConfig(bootstrap, (store) => store.edit(edit));
}

/** The config the home's servers run: the file, or the shared document with the file's local sections. */
export async function loadHomeConfig(paths: HomePaths): Promise<Config> {
  const bootstrap = sharedConfigBootstrap(paths);
  if (!bootstrap) return loadConfigFile(paths.config);
  return withSharedConfig(bootstrap, async (store) => (await store.load()).config);
}

/** The raw JSON the home's servers run (`${ENV}` references as written), for listings that must not show secrets. */
export async function readHomeRawConfig(paths: HomePaths): Promise<RawConfig> {
  const bootstrap = sharedConfigBootstrap(paths);
  if (!bootstrap) return readRawConfig(paths.config);
  return withSharedConfig(bootstrap, async (store) => (await store.load()).raw);
}

/** The file's bootstrap when its state is on Redis; undefined for the embedded state or a home with no config yet. */
function sharedConfigBootstrap(paths: HomePaths): Bootstrap | undefined {
  if (!existsSync(paths.config) || !readFileSync(paths.config, "utf8").trim()) return undefined;
  const bootstrap = readBootstrap(paths.config);
  return bootstrap.state.driver === "redis" ? bootstrap : undefined;
}

async function withSharedConfig<T>(bootstrap: Bootstrap, work: (store: RedisConfigStore) => Promise<T>): Promise<T> {
  // Imported here: only a home on Redis needs ioredis, and loading it slows every command's start.
  const { RedisConfigStore } = await import("../store/redis-config-store.js");
  const store = await RedisConfigStore.connect(bootstrap).catch((error: unknown) => {
    throw new CliError(`${error instanceof Error ? error.message : String(error)}; nothing was changed`);
  });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
