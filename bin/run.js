#!/usr/bin/env node
// oclif entry: loads the compiled commands from dist/commands (see package.json "oclif").
// `gw --version`, `gw serve` and the everyday listings are answered first without loading oclif,
// which costs ~200 ms of every start (src/cli/fast-path.ts says which command lines, and why). The
// fast path runs from dist/bundle/, a few chunks instead of ~580 modules (scripts/bundle-cli.mjs).
import module from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Node >= 22.1 keeps the compiled code of every module between runs (in the OS temp folder).
module.enableCompileCache?.();
const argv = process.argv.slice(2);
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { runFast } = await import("../dist/bundle/fast-path.js");
if (!(await runFast(argv, root))) {
  const { execute, settings } = await import("@oclif/core");
  // Always run the compiled commands, whatever NODE_ENV says (oclif would look for ts sources).
  settings.enableAutoTranspile = false;
  await execute({ dir: import.meta.url });
}
