// The local provider's image capability: upscaling (lanczos) and flat-background removal with
// sharp on this machine. It draws and edits nothing. No network, so the signal is only checked
// before the work starts, and while it waits for its turn (LOCAL_PICTURE_RUNS).
import os from "node:os";
import { lowerPictureThreads } from "../../media/picture-threads.js";
import { createRunSlots } from "../../media/run-slots.js";
import type { ImageCallOptions, ImageCapability, ImageTransformRequest } from "../image-types.js";
import { UnsupportedContentError } from "../provider-errors.js";
import { FLAT_BACKGROUND_MODEL, removeFlatBackground } from "./flat-background.js";
import { LANCZOS_MODEL, lanczosUpscale } from "./lanczos-upscale.js";

/**
 * Local pictures worked on at once; the others wait, in order (their caller may give up meanwhile).
 * Each holds a libuv thread for its whole run (seconds for 64 MP) and keeps a core busy: at least
 * one core is left to the event loop, and two of libuv's threads (UV_THREADPOOL_SIZE, default 4)
 * to file access and DNS lookups (docs/decisions.md §5).
 */
export const LOCAL_PICTURE_RUNS = Math.max(1, Math.min(os.availableParallelism() - 1, threadPoolSize() - 2));

const takeSlot = createRunSlots(LOCAL_PICTURE_RUNS);

export function createLocalImages(provider: string): ImageCapability {
  return {
    async upscale(request, options) {
      checkRequest(request, options, LANCZOS_MODEL, "upscaler");
      return { images: [await inTurn(options, () => lanczosUpscale(request.image, { scale: request.scale, outputFormat: request.outputFormat }))] };
    },

    async removeBackground(request, options) {
      checkRequest(request, options, FLAT_BACKGROUND_MODEL, "background remover");
      if (request.scale !== undefined) throw new UnsupportedContentError("Background removal takes no scale.", "scale");
      return { images: [await inTurn(options, () => removeFlatBackground(request.image, { outputFormat: request.outputFormat }))] };
    },
  };

  function checkRequest(request: ImageTransformRequest, options: ImageCallOptions, model: string, what: string): void {
    options.signal.throwIfAborted();
    if (request.model !== model)
      throw new UnsupportedContentError(`The local provider has no ${what} "${request.model}"; it has "${provider}/${model}".`, "model");
    if (request.prompt !== undefined) throw new UnsupportedContentError(`${provider}/${model} takes no prompt.`, "prompt");
  }
}

async function inTurn<T>(options: ImageCallOptions, work: () => Promise<T>): Promise<T> {
  const release = await takeSlot(options.signal);
  const stopLowering = lowerPictureThreads();
  try {
    return await work();
  } finally {
    stopLowering();
    release();
  }
}

/** libuv's threads, as libuv reads UV_THREADPOOL_SIZE: 4 when unset, else the number, from 1 to 1024. */
function threadPoolSize(): number {
  const configured = process.env.UV_THREADPOOL_SIZE;
  if (!configured) return 4;
  const size = Number.parseInt(configured, 10);
  return Math.min(1024, Number.isInteger(size) && size >= 1 ? size : 1);
}
