// What `gw image upscale` and `gw image remove-background` share: the picture argument (a FILE
// or `-` for stdin, sent inline as a data: URL; an http(s) or data: URL, sent as it is; asset:ID,
// a library picture sent as parent_asset_id with no image), their flags, and saving the result
// the way `gw image generate` does.
import { Args, Flags, type Interfaces } from "@oclif/core";
import type { ImageResultBody } from "../client/image-types.js";
import { type ImageUpscaleRequest, TransformClient } from "../client/transform-client.js";
import { UsageError } from "./cli-error.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "./flags.js";
import { gatewayClient } from "./gateway-client.js";
import { outputFormatFor, saveImageResult } from "./image-options.js";
import { pictureField } from "./picture-argument.js";

export const transformPictureArgument = Args.string({
  description: "the picture: a local FILE (- reads it from stdin), an http(s) or data: URL the gateway downloads, or asset:ID for a picture in your library",
  required: true,
});

export const transformFlags = {
  output: Flags.string({ char: "o", description: "where to write the picture; - is stdout [default: ./image-<asset id>.<ext>]" }),
  format: Flags.string({ description: "png or webp [default: webp, or the -o FILE extension]" }),
  model: Flags.string({ description: "model id, allowlisted by the operator (gw tools list) [default: the gateway's default]" }),
  project: Flags.string({ description: "project id from `gw projects list` [default: your default project]" }),
  parent: Flags.string({ description: "asset id of the library picture this one follows (its lineage); asset:ID sets it for you" }),
  json: Flags.boolean({ ...jsonFlag, description: "print exactly the API body (the picture as base64) on stdout; a file is written only with -o FILE" }),
  "api-key": apiKeyFlag,
  "base-url": baseUrlFlag,
};

export type TransformFlags = Interfaces.InferredFlags<typeof transformFlags>;

export type TransformSend = (client: TransformClient, body: ImageUpscaleRequest) => Promise<ImageResultBody>;

export async function runTransformCommand(picture: string, flags: TransformFlags, extra: ImageUpscaleRequest, send: TransformSend): Promise<void> {
  if (flags.output === "-" && flags.json) throw new UsageError("--json and -o - both want stdout; choose one");
  const client = new TransformClient(gatewayClient(flags).transport);
  const body: ImageUpscaleRequest = { ...extra, ...(await pictureBody(picture, flags.parent)) };
  const format = outputFormatFor(flags.format, flags.output);
  // Sent as asked: the server refuses a format other than png or webp with its own message.
  if (format !== undefined) body.output_format = format as ImageUpscaleRequest["output_format"];
  if (flags.model !== undefined) body.model = flags.model;
  if (flags.project !== undefined) body.project_id = flags.project;
  await saveImageResult(await send(client, body), flags.output, flags.json);
}

async function pictureBody(picture: string, parent: string | undefined): Promise<ImageUpscaleRequest> {
  const asset = /^asset:(.*)$/i.exec(picture);
  if (asset) {
    const id = asset[1]!.trim();
    if (!id) throw new UsageError(`${picture}: asset:ID names no asset id`);
    if (parent !== undefined && parent !== id) throw new UsageError(`${picture} is its own lineage; drop --parent ${parent}`);
    return { parent_asset_id: id };
  }
  const field = await pictureField(picture);
  const body: ImageUpscaleRequest = { image: "mediaUrl" in field ? field.mediaUrl : field.mediaBase64 };
  if (parent !== undefined) body.parent_asset_id = parent;
  return body;
}
