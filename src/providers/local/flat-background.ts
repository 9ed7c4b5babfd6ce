// local/flat-background: make a flat, uniform background transparent (product shots on one
// colour, studio backdrops, scans), on this machine. The pixel work is flat-background-mask.ts;
// here the picture is decoded to raw RGBA with sharp and encoded back with its alpha channel.
import { Worker } from "node:worker_threads";
import type { ImageBytes, ImageOutputFormat } from "../image-types.js";
import { UnsupportedContentError } from "../provider-errors.js";
import { clearFlatBackground, NotFlatBackgroundError } from "./flat-background-mask.js";
import type { MaskJob, MaskReply } from "./flat-background-worker.js";
import { encodeLocal, localFormat, openPicture, orientedSize, rawPicture, refuseOversizedWebp } from "./local-pictures.js";

export const FLAT_BACKGROUND_MODEL = "flat-background";
/**
 * The pixel pass holds about 9 bytes per pixel: 25 megapixels (a 24 MP camera picture) bounds it
 * to about a quarter of a gigabyte and, measured on a loaded two-core machine, 1.3 to 2.5 seconds
 * for 24 MP, so pictures above INLINE_MAX_PIXELS are cleared in a worker thread.
 */
export const FLAT_BACKGROUND_MAX_PIXELS = 25_000_000;

const ENGINE = "local/flat-background";
/** Below this the pass takes milliseconds: a worker would cost more than it saves. */
const INLINE_MAX_PIXELS = 1_000_000;
// The worker runs the same module as this one: built .js, or the TypeScript sources under tsx
// (the tests), whose loader a worker thread does not inherit: it registers it first.
const FROM_SOURCES = import.meta.url.endsWith(".ts");
const WORKER_URL = new URL(`./flat-background-worker${FROM_SOURCES ? ".ts" : ".js"}`, import.meta.url);

export async function removeFlatBackground(image: ImageBytes, options: { outputFormat?: ImageOutputFormat }): Promise<ImageBytes> {
  const format = localFormat(options.outputFormat, ENGINE);
  const size = await orientedSize(image.bytes, FLAT_BACKGROUND_MAX_PIXELS, ENGINE);
  refuseOversizedWebp(format, size.width, size.height, ENGINE);
  const { data, info } = await (await openPicture(image.bytes, FLAT_BACKGROUND_MAX_PIXELS))
    .toColourspace("srgb")
    .ensureAlpha()
    .raw({ depth: "uchar" })
    .toBuffer({ resolveWithObject: true });
  let pixels: Uint8Array = data;
  try {
    if (info.width * info.height <= INLINE_MAX_PIXELS) clearFlatBackground(data, info.width, info.height);
    else pixels = await clearInWorker(data, info.width, info.height);
  } catch (error) {
    if (!(error instanceof NotFlatBackgroundError)) throw error;
    throw new UnsupportedContentError(
      `${ENGINE} removes flat, one-colour backgrounds only, and ${error.message}; use a segmentation model for this picture.`,
      "image",
    );
  }
  return encodeLocal(await rawPicture(pixels, info.width, info.height), format);
}

/** The same pass on a worker thread, over a shared copy of the pixels; one short-lived worker per picture. */
async function clearInWorker(data: Uint8Array, width: number, height: number): Promise<Uint8Array> {
  const pixels = new Uint8Array(new SharedArrayBuffer(data.byteLength));
  pixels.set(data);
  const worker = FROM_SOURCES
    ? new Worker(`import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`, { eval: true })
    : new Worker(WORKER_URL);
  try {
    const reply = await new Promise<MaskReply>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the background worker exited with code ${code}`)));
      worker.postMessage({ pixels, width, height } satisfies MaskJob);
    });
    if ("notFlat" in reply) throw new NotFlatBackgroundError(reply.notFlat);
    if ("failed" in reply) throw new Error(`background removal failed: ${reply.failed}`);
    return pixels;
  } finally {
    await worker.terminate();
  }
}
