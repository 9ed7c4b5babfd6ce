// The built fast path (scripts/bundle-cli.mjs, docs/decisions.md §29): what bin/run.js loads, and
// chunks V8 can keep at one byte a character (any character past U+00FF in a script's source
// doubles what the whole script holds in memory for the life of the process).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { projectRoot } from "./helpers/gateway-harness.js";

const bundle = path.join(projectRoot, "dist/bundle");

test("bin/run.js loads the bundled fast path, and the worker thread's file sits beside its chunks", (t) => {
  t.regex(readFileSync(path.join(projectRoot, "bin/run.js"), "utf8"), /import\("\.\.\/dist\/bundle\/fast-path\.js"\)/);
  const files = readdirSync(bundle);
  t.true(files.includes("fast-path.js"));
  t.true(files.includes("flat-background-worker.js"));
});

test("every chunk's source is Latin-1: characters past it are written as escapes", (t) => {
  const chunks = readdirSync(bundle).filter((name) => name.endsWith(".js"));
  t.true(chunks.length > 10);
  for (const name of chunks) {
    const wide = /[\u0100-\u2027\u202a-\uffff]/.exec(readFileSync(path.join(bundle, name), "utf8"));
    t.is(wide, null, `${name}: ${wide?.[0]}`);
  }
});
