// The run of an image endpoint command (generate, edit): one request from PROMPT and the flags,
// saved as image-options.ts says, or a --batch of them (image-batch.ts).
import type { GwClient } from "../client/gw-client.js";
import type { ImageResultBody } from "../client/image-types.js";
import { gatewayClient } from "./gateway-client.js";
import { runImageBatch } from "./image-batch.js";
import { checkOutputFlags, type ImageRequestFlags, imageParameters, outputFormatFor, saveImageResult } from "./image-options.js";
import { textArgument } from "./stdin.js";

export interface ImageEndpoint {
  send(client: GwClient, body: Record<string, unknown>): Promise<ImageResultBody>;
  /** Completes a batch line's body before it is sent (edit: reads the pictures it names). */
  prepareLine?(body: Record<string, unknown>): Promise<void>;
}

/** `extra`: body fields from the command's own flags (edit: the pictures), defaults for batch lines. */
export async function runImageCommand(
  endpoint: ImageEndpoint,
  flags: ImageRequestFlags,
  prompt: string | undefined,
  extra: Record<string, unknown> = {},
): Promise<void> {
  checkOutputFlags(flags, prompt);
  const client = gatewayClient(flags);
  if (flags.batch !== undefined) {
    await runImageBatch({
      source: flags.batch,
      directory: flags.output ?? ".",
      concurrency: flags.concurrency,
      defaults: { ...imageParameters(flags, flags.format), ...extra },
      send: async (body) => {
        await endpoint.prepareLine?.(body);
        return endpoint.send(client, body);
      },
    });
    return;
  }
  const body = { prompt: await textArgument(prompt!, "prompt"), ...imageParameters(flags, outputFormatFor(flags.format, flags.output)), ...extra };
  await saveImageResult(await endpoint.send(client, body), flags.output, flags.json);
}
