// The image endpoints: the public catalog and styles (no key), and POST /v1/image/generations,
// /v1/image/edits, /v1/image/upscale and /v1/image/background-removal (Bearer key, per-key rate
// limit), with OpenAI's /v1/images/generations and /v1/images/edits as aliases for the official
// SDK. Errors render in the gateway envelope.
import type { H3, H3Event } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import { imageEditFromForm, MAX_EDIT_IMAGES, parseImageEdit } from "../../gateway/images/image-edit-request.js";
import { parseImageGeneration } from "../../gateway/images/image-request.js";
import type { ImageOutcome } from "../../gateway/images/image-results.js";
import { parseBackgroundRemoval, parseImageUpscale } from "../../gateway/images/image-transform-request.js";
import { fromOpenAIImagesForm, fromOpenAIImagesJson } from "../../gateway/images/openai-images-compat.js";
// A part larger than one picture may be is refused while it streams in (413), not after.
import { MAX_PICTURE_BYTES } from "../../gateway/media/picture-input.js";
import { readJsonObject } from "../read-json-body.js";
import { isMultipart, readMultipartForm } from "../read-multipart-form.js";
import type { RequestCharges } from "../request-charges.js";
import { nodeRequest } from "../request-context.js";
import { toolCallContext } from "./tool-call-context.js";

export function registerImages(app: H3, gateway: Gateway, charges: RequestCharges): void {
  app.get("/v1/public/image-models", () => gateway.imageCatalog());

  app.get("/v1/image/styles", () => gateway.imageStyles());

  // The gateway's /v1/image/* paths, and OpenAI's /v1/images/* (for the official SDK: `openai` adds its own defaults).
  postWithOpenAIAlias(app, charges, ["/v1/image/generations", "/v1/images/generations"], async (event, openai) => {
    const context = await toolCallContext(event, gateway);
    const json = await readJsonObject(event, gateway.config.server.maxJsonBodyBytes);
    const body = parseImageGeneration(openai ? fromOpenAIImagesJson(gateway.config, json) : json);
    return answer(event, await gateway.images.generate(body, context));
  });

  postWithOpenAIAlias(app, charges, ["/v1/image/edits", "/v1/images/edits"], async (event, openai) => {
    const context = await toolCallContext(event, gateway);
    let body: ReturnType<typeof parseImageEdit>;
    if (isMultipart(event.req.headers.get("content-type"))) {
      const form = await readMultipartForm(nodeRequest(event), { maxFileBytes: MAX_PICTURE_BYTES, maxFiles: MAX_EDIT_IMAGES + 1 });
      body = imageEditFromForm(openai ? fromOpenAIImagesForm(gateway.config, form) : form);
    } else {
      const json = await readJsonObject(event, gateway.config.server.maxJsonBodyBytes);
      body = parseImageEdit(openai ? fromOpenAIImagesJson(gateway.config, json) : json);
    }
    return answer(event, await gateway.images.edit(body, context));
  });

  app.post(
    "/v1/image/upscale",
    charges.counted(async (event) => {
      const context = await toolCallContext(event, gateway);
      const body = parseImageUpscale(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
      return answer(event, await gateway.imageTransforms.upscale(body, context));
    }),
  );

  app.post(
    "/v1/image/background-removal",
    charges.counted(async (event) => {
      const context = await toolCallContext(event, gateway);
      const body = parseBackgroundRemoval(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
      return answer(event, await gateway.imageTransforms.removeBackground(body, context));
    }),
  );
}

/** One handler on the gateway's path and on OpenAI's alias of it; `openai` says which was called. Both answer what they charged. */
function postWithOpenAIAlias(
  app: H3,
  charges: RequestCharges,
  [path, openaiPath]: [string, string],
  handler: (event: H3Event, openai: boolean) => Promise<unknown>,
): void {
  app.post(
    path,
    charges.counted((event) => handler(event, false)),
  );
  app.post(
    openaiPath,
    charges.counted((event) => handler(event, true)),
  );
}

/** The image result body, with its headers. */
export function answer(event: H3Event, outcome: ImageOutcome): ImageOutcome["body"] {
  if (outcome.upstreamRequestId) event.res.headers.set("x-service-upstream-trace-id", outcome.upstreamRequestId);
  if (outcome.assetWarning) event.res.headers.set("x-service-asset-warning", outcome.assetWarning);
  if (outcome.enhancedPromptHeader) event.res.headers.set("x-service-enhanced-prompt", outcome.enhancedPromptHeader);
  return outcome.body;
}
