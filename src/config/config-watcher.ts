// Reload the config when its file changes. A change that does not validate is reported and
// the previous config stays in force.
import { type FSWatcher, watch } from "node:fs";
import path from "node:path";
import { ConfigError } from "./config-error.js";
import { loadConfigFile } from "./load-config.js";
import type { Config } from "./resolved-config.js";

export interface ConfigWatcherEvents {
  onReload: (config: Config) => void;
  onError: (error: ConfigError) => void;
}

export function watchConfig(file: string, events: ConfigWatcherEvents): FSWatcher {
  let timer: NodeJS.Timeout | null = null;
  const reload = () => {
    timer = null;
    try {
      events.onReload(loadConfigFile(file));
    } catch (error) {
      if (error instanceof ConfigError) events.onError(error);
      else events.onError(new ConfigError((error as Error).message, file));
    }
  };
  return watch(path.dirname(file), { persistent: false }, (_event, name) => {
    if (name && name !== path.basename(file)) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(reload, 30);
  });
}
