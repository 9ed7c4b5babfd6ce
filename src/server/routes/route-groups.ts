// Route groups whose module loads on the group's first request (docs/decisions.md §28): a server
// that only routes chat never builds the media endpoints, their request schemas or what they
// import. Their paths are listed here so that the app can claim them without loading the group.
import { H3, type H3Event } from "h3";
import { MethodNotAllowedError } from "../../gateway/errors.js";
import { onFirstLoad } from "../../load/on-first-use.js";

/** routes/images.ts */
export const IMAGE_PATHS = [
  "/v1/public/image-models",
  "/v1/image/styles",
  "/v1/image/generations",
  "/v1/image/edits",
  "/v1/image/upscale",
  "/v1/image/background-removal",
  "/v1/images/generations",
  "/v1/images/edits",
];

/** routes/audio.ts */
export const AUDIO_PATHS = [
  "/v1/public/audio-models",
  "/v1/audio/voices",
  "/v1/audio/transcriptions",
  "/v1/audio/speech",
  "/v1/audio/synthesize",
  "/v1/audio/transcribe",
];

/** routes/vision.ts */
export const VISION_PATHS = ["/v1/image/describe", "/v1/vision/describe", "/v1/vision/ocr"];

export function methodNotAllowed(event: H3Event): MethodNotAllowedError {
  return new MethodNotAllowedError(`${event.req.method} is not allowed on ${event.url.pathname}.`);
}

/**
 * Claim `paths` on `app` for a group that `load` registers on an H3 app of its own, loaded on the
 * first request to any of them (and again after a failed load). A method the group does not take
 * on one of its paths is 405, as on every other known path.
 */
export function registerOnFirstRequest(app: H3, paths: readonly string[], load: () => Promise<(group: H3) => void>): void {
  const group = onFirstLoad(async () => {
    const routes = new H3();
    (await load())(routes);
    routes.all("/**", (event) => {
      throw methodNotAllowed(event);
    });
    return routes;
  });
  const handler = async (event: H3Event) => (await group()).handler(event);
  for (const path of paths) app.all(path, handler);
}
