// The console's static files, all shipped in the package (nothing is loaded from outside gw): its
// own stylesheet and script (assets/console/) and uPlot's script and stylesheet from the `uplot`
// dependency. Read once, on the first console request. Their URLs carry a hash of their contents,
// /console/assets/<hash>/<name>, so they are cached for a year and a new gw version is fetched
// anew; a URL with another hash (a page from an instance of another version) still gets today's
// file, not cached.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { H3Event } from "h3";
import { projectRoot } from "../../config/project-root.js";
import { RouteNotFoundError } from "../../gateway/errors.js";

export type AssetName = "console.css" | "console.js" | "uplot.css" | "uplot.js";

const JAVASCRIPT = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

interface Asset {
  type: string;
  bytes: Buffer;
}

export class ConsoleAssets {
  private readonly files: Map<string, Asset>;
  readonly version: string;

  constructor() {
    const own = path.join(projectRoot(), "assets", "console");
    const require = createRequire(import.meta.url);
    const sources: Record<AssetName, { file: string; type: string }> = {
      "console.css": { file: path.join(own, "console.css"), type: CSS },
      "console.js": { file: path.join(own, "console.js"), type: JAVASCRIPT },
      "uplot.css": { file: require.resolve("uplot/dist/uPlot.min.css"), type: CSS },
      "uplot.js": { file: require.resolve("uplot/dist/uPlot.iife.min.js"), type: JAVASCRIPT },
    };
    this.files = new Map(Object.entries(sources).map(([name, { file, type }]) => [name, { type, bytes: readFileSync(file) }]));
    const hash = createHash("sha256");
    for (const [name, asset] of this.files) hash.update(name).update(asset.bytes);
    this.version = hash.digest("hex").slice(0, 12);
  }

  url(name: AssetName): string {
    return `/console/assets/${this.version}/${name}`;
  }

  /** `rest`: what follows /console/assets/ — the version and the name. */
  serve(event: H3Event, rest: string): Uint8Array {
    const [version, name, ...more] = rest.split("/");
    const asset = name === undefined || more.length > 0 ? undefined : this.files.get(name);
    if (!asset || (event.req.method !== "GET" && event.req.method !== "HEAD")) throw new RouteNotFoundError(`No console asset at ${event.url.pathname}.`);
    event.res.headers.set("content-type", asset.type);
    event.res.headers.set("cache-control", version === this.version ? "public, max-age=31536000, immutable" : "no-cache");
    return asset.bytes;
  }
}
