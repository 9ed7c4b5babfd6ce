// Opening the gw home from a command. Commands that create something (agents, keys, providers,
// routes, plans) initialise a missing home, as `gw init` would, since `gw keys create` on a fresh
// machine is the natural first step. Commands that only read or remove ask for `gw init` instead.
import { existsSync } from "node:fs";
import { initHome, isInitialised } from "../config/init-home.js";
import { loadConfigFile } from "../config/load-config.js";
import { type HomePaths, homePaths, resolveHome } from "../config/paths.js";
import type { Config } from "../config/resolved-config.js";
import { MetadataStore } from "../store/metadata-store.js";
import { CliError } from "./cli-error.js";

export interface HomeOptions {
  /** Initialise the home when it has no config yet. */
  create?: boolean;
}

export async function openHome(homeFlag: string | undefined, options: HomeOptions = {}): Promise<HomePaths> {
  const home = resolveHome(homeFlag);
  if (options.create) await ensureHome(home);
  else if (!isInitialised(home)) throw new CliError(`${home} is not a gw home (no config.json): run \`gw init\` first, or pass --home`);
  return homePaths(home);
}

/** Initialise the home unless its config and metadata are both there (initHome is safe in parallel). */
async function ensureHome(home: string): Promise<void> {
  const paths = homePaths(home);
  if (!isInitialised(home) || !existsSync(paths.metadata)) await initHome(home);
}

export function loadConfig(paths: HomePaths): Config {
  return loadConfigFile(paths.config);
}

/** Run `work` with the metadata store open, and close it afterwards. */
export async function withMetadata<T>(paths: HomePaths, work: (store: MetadataStore) => Promise<T>): Promise<T> {
  const store = await MetadataStore.open(paths.metadata);
  try {
    return await work(store);
  } finally {
    store.close();
  }
}
