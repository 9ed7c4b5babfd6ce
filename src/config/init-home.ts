// `gw init`: a home with config.json and an empty metadata store. Idempotent: existing files are kept.
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { writeFileAtomic } from "../store/atomic-write.js";
import { MetadataStore } from "../store/metadata-store.js";
import { defaultConfigText } from "./config-file.js";
import { loadConfigFile } from "./load-config.js";
import { type HomePaths, homePaths } from "./paths.js";
import { projectRoot } from "./project-root.js";

export interface InitResult {
  paths: HomePaths;
  createdConfig: boolean;
  createdMetadata: boolean;
}

export async function initHome(home: string): Promise<InitResult> {
  const paths = homePaths(home);
  mkdirSync(paths.usageDir, { recursive: true });
  const createdConfig = !existsSync(paths.config);
  if (createdConfig) writeFileAtomic(paths.config, defaultConfigText().replace('"./schema.json"', JSON.stringify(schemaUrl())));
  loadConfigFile(paths.config);
  const createdMetadata = !existsSync(paths.metadata);
  const store = await MetadataStore.open(paths.metadata, { create: true });
  store.close();
  return { paths, createdConfig, createdMetadata };
}

/** Whether the home was ever initialised (a config file exists). */
export function isInitialised(home: string): boolean {
  return existsSync(homePaths(home).config);
}

function schemaUrl(): string {
  return pathToFileURL(path.join(projectRoot(), "config", "schema.json")).href;
}
