// Worker-thread side of local/flat-background: the pixel pass of a large picture takes seconds
// of pure JavaScript, which on the gateway's event loop would stall every other request (chat
// streams included). The pixels are shared memory, cleared in place.
import { parentPort } from "node:worker_threads";
import { clearFlatBackground, NotFlatBackgroundError } from "./flat-background-mask.js";

export interface MaskJob {
  pixels: Uint8Array;
  width: number;
  height: number;
}

export type MaskReply = { done: true } | { notFlat: number } | { failed: string };

parentPort?.on("message", ({ pixels, width, height }: MaskJob) => {
  let reply: MaskReply;
  try {
    clearFlatBackground(pixels, width, height);
    reply = { done: true };
  } catch (error) {
    reply = error instanceof NotFlatBackgroundError ? { notFlat: error.matchingShare } : { failed: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(reply);
});
