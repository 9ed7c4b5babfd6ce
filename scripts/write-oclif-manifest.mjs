// Writes oclif.manifest.json so `gw` starts without importing every command to read its flags.
import { writeFileSync } from "node:fs";
import { Plugin } from "@oclif/core";

const root = new URL("..", import.meta.url).pathname;
const plugin = new Plugin({ root, type: "core", ignoreManifest: true, errorOnManifestCreate: true, isRoot: true });
await plugin.load();
writeFileSync(new URL("../oclif.manifest.json", import.meta.url), `${JSON.stringify(plugin.manifest, null, 2)}\n`);
