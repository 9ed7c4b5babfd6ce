// sharp (libvips) adds about 20 MB of resident memory once loaded; a gateway that serves only
// chat never needs it, so every server-side use loads it on first call instead of at start.
import type SharpFactory from "sharp";

let loading: Promise<typeof SharpFactory> | undefined;

export function loadSharp(): Promise<typeof SharpFactory> {
  loading ??= import("sharp").then((module) => module.default);
  return loading;
}
