// The local engines (ffmpeg, ffprobe, espeak-ng, tesseract) run below the gateway's own CPU
// priority. A render or a conversion takes every core it can get (x264 and ffmpeg's filters start
// a thread per core); at the same priority the event loop waited its turn behind them, and chat
// answers with it (5x the idle p99 during a local/kenburns render on two cores,
// scripts/bench-transfer.mjs). Lower, the engine still has every cycle the gateway leaves idle.
import os from "node:os";

/** How much lower than the gateway, in nice steps (Linux weights: about 1/10 of the CPU share when both want it). */
export const ENGINE_NICE_STEPS = 10;
const LOWEST = 19;

/**
 * Lower a freshly spawned engine's priority. Call it right after spawn: threads the engine starts
 * afterwards inherit it. Never throws: an engine at the same priority still works.
 */
export function lowerEnginePriority(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    os.setPriority(pid, Math.min(LOWEST, os.getPriority() + ENGINE_NICE_STEPS));
  } catch {
    // Already gone (it failed to start or finished at once), or a platform without priorities.
  }
}
