#!/usr/bin/env node
// oclif entry: loads the compiled commands from dist/commands (see package.json "oclif").
import { execute } from "@oclif/core";

await execute({ dir: import.meta.url });
