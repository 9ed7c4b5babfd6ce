#!/usr/bin/env node
// oclif entry: loads the compiled commands from dist/commands (see package.json "oclif").
import { execute, settings } from "@oclif/core";

// Always run the compiled commands, whatever NODE_ENV says (oclif would look for ts sources).
settings.enableAutoTranspile = false;
await execute({ dir: import.meta.url });
