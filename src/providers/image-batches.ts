// `n` pictures from vendors that draw fewer per call (dall-e-3 and Stability draw one): several
// calls, a few at a time, merged in order. The first failure aborts the calls still running and
// is what the caller sees, so retry and fallback work as for a single call.
import type { ImageResult } from "./image-types.js";

export interface ImageBatch {
  /** Pictures this call draws. */
  count: number;
  /** 0-based position of the call (vendors that take a seed draw call i with seed + i). */
  index: number;
  signal: AbortSignal;
}

const CONCURRENT_CALLS = 4;

export async function drawInBatches(n: number, perCall: number, signal: AbortSignal, draw: (batch: ImageBatch) => Promise<ImageResult>): Promise<ImageResult> {
  if (n <= perCall) return draw({ count: n, index: 0, signal });
  const counts = Array.from({ length: Math.ceil(n / perCall) }, (_, index) => Math.min(perCall, n - index * perCall));
  const controller = new AbortController();
  const abort = () => controller.abort(signal.reason);
  signal.addEventListener("abort", abort, { once: true });
  const results: ImageResult[] = [];
  let failure: { error: unknown } | undefined;
  let next = 0;
  async function worker(): Promise<void> {
    while (next < counts.length && !failure) {
      const index = next++;
      try {
        results[index] = await draw({ count: counts[index]!, index, signal: controller.signal });
      } catch (error) {
        failure ??= { error };
        controller.abort(error);
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: Math.min(CONCURRENT_CALLS, counts.length) }, worker));
  } finally {
    signal.removeEventListener("abort", abort);
  }
  if (failure) throw failure.error;
  return mergeImageResults(results);
}

export function mergeImageResults(results: readonly ImageResult[]): ImageResult {
  const merged: ImageResult = { images: results.flatMap((result) => result.images) };
  const refusal = results.find((result) => result.refusal !== undefined)?.refusal;
  if (refusal !== undefined) merged.refusal = refusal;
  const upstreamRequestId = results.find((result) => result.upstreamRequestId)?.upstreamRequestId;
  if (upstreamRequestId) merged.upstreamRequestId = upstreamRequestId;
  const quality = results.find((result) => result.quality)?.quality;
  if (quality) merged.quality = quality;
  const usages = results.map((result) => result.usage).filter((usage) => usage !== undefined);
  if (usages.length > 0) {
    merged.usage = {
      inputTokens: usages.reduce((total, usage) => total + (usage.inputTokens ?? 0), 0),
      outputTokens: usages.reduce((total, usage) => total + (usage.outputTokens ?? 0), 0),
    };
  }
  return merged;
}
