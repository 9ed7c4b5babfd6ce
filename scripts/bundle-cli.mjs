// The CLI's fast path (dist/src/cli/fast-path.js: `gw serve`, `gw --version`, `gw keys list`,
// `gw models`) as ES module chunks in dist/bundle/, which bin/run.js loads. Node's ES module
// loader pays for every file it resolves, reads, links and evaluates, so a server start that
// loaded ~580 modules (gw's own and its dependencies', zod's 95 and undici's 112 among them) spent
// most of its first second there; as a few chunks the same code starts in about half the time
// (docs/benchmarks.md, "Server start-up and memory"; docs/decisions.md §29). What gw imports on
// first use stays a separate chunk, loaded on that use, so lazy stays lazy. Run by `npm run build`
// after tsc: it bundles tsc's output, one compiler for both.
//
// Left outside the bundle, loaded from node_modules at run time: native code (sharp), what finds
// its own files next to itself (ioredis reads its package.json by __dirname, which an ES module
// does not have), oclif (the commands the fast path does not take run from dist/commands), and
// the large packages only some servers load (OpenTelemetry, the MCP SDK, prom-client).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const EXTERNAL = ["sharp", "@oclif/*", "ioredis", "@opentelemetry/*", "@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk/*", "prom-client", "pino-pretty"];

// Chunk names carry a hash of their content: a rebuild would leave the old ones beside the new.
rmSync("dist/bundle", { recursive: true, force: true });
const { outputFiles } = await build({
  entryPoints: {
    "fast-path": "dist/src/cli/fast-path.js",
    // The local background remover's worker thread, found next to the chunk that starts it
    // (src/providers/local/flat-background.ts resolves it from its own import.meta.url).
    "flat-background-worker": "dist/src/providers/local/flat-background-worker.js",
  },
  outdir: "dist/bundle",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20.19",
  external: EXTERNAL,
  // CommonJS dependencies inside an ES module chunk call `require` for Node's builtins and each other.
  banner: { js: 'import { createRequire as gwCreateRequire } from "node:module"; const require = gwCreateRequire(import.meta.url);' },
  logLevel: "warning",
  write: false,
});
mkdirSync("dist/bundle", { recursive: true });
for (const file of outputFiles) writeFileSync(file.path, oneByteSource(file.text));

/**
 * The chunk's text with every character past Latin-1 written as a `\uXXXX` escape. V8 keeps a
 * script's source for as long as the script lives, at two bytes a character when any one of them
 * is past U+00FF, else at one: a single "…" in a comment doubled a 1 MB chunk, ~6 MiB of an idle
 * server in all. esbuild escapes such characters in strings and plain templates, not in comments,
 * regular expression literals or tagged templates (the console's html``). In a comment the escape
 * is text; in a regular expression it matches the same character (an escaped one, `\—`, loses
 * its backslash: the escape is the character itself), only the pattern's `source` reads
 * otherwise; in a tagged template the cooked string is the same (a tag reading `strings.raw`
 * would see the escape; none of gw's does). U+2028 and U+2029 stay: outside a string they end a
 * line.
 */
function oneByteSource(text) {
  return text.replace(/(\\*)([\u0100-\u2027\u202a-\uffff])/g, (_match, slashes, character) => {
    const escaped = `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;
    return (slashes.length % 2 === 1 ? slashes.slice(1) : slashes) + escaped;
  });
}
