// sharp (libvips) adds about 20 MB of resident memory once loaded; a gateway that serves only
// chat never needs it, so every server-side use loads it on first call instead of at start.
//
// Once loaded, libvips is kept to at most one thread per picture fewer than the cores: a
// picture's pixels never hold every core, so the event loop keeps one (sharp's own default is a
// thread per core, or 1 on glibc without jemalloc; a lower default is kept).
import os from "node:os";
import type SharpFactory from "sharp";
import { onFirstLoad } from "../load/on-first-use.js";

export const loadSharp: () => Promise<typeof SharpFactory> = onFirstLoad(async () => {
  const sharp = (await import("sharp")).default;
  const spare = Math.max(1, os.availableParallelism() - 1);
  if (sharp.concurrency() > spare) sharp.concurrency(spare);
  return sharp;
});
