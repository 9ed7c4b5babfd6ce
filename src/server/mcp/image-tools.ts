// The image tools of the MCP server (`image_edit` takes `images` as strings and their roles as a
// second list, `image_roles`, in the same order; the transforms take image / parent_asset_id):
// each one takes the HTTP endpoint's body and goes through the same parser and service, so
// validation, plan caps, credits, storage and lineage are those of HTTP. The input schemas tell
// clients the shape; the values are checked by the endpoint's own rules, so a bad value comes back
// with the HTTP error code.

import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { parseImageEdit } from "../../gateway/images/image-edit-request.js";
import { parseImageGeneration } from "../../gateway/images/image-request.js";
import { parseBackgroundRemoval, parseImageUpscale } from "../../gateway/images/image-transform-request.js";
import { isFileId } from "../../gateway/storage/stored-file.js";
import { parseDescribeRequest } from "../../gateway/vision/vision-request.js";
import type { McpToolContext } from "./mcp-context.js";
import { imageToolResult, jsonToolResult } from "./tool-results.js";

const pictureResultSchema = {
  id: z.string().describe("the request id"),
  created: z.number(),
  model: z.string(),
  data: z.array(
    z
      .object({ media_type: z.string(), revised_prompt: z.string().optional(), asset_id: z.string().optional().describe("library id of the stored picture") })
      .loose(),
  ),
  refusal: z.string().optional(),
  enhanced_prompt: z.string().optional(),
  asset_warning: z.string().optional(),
  timing: z.object({ total_ms: z.number(), upstream_ms: z.number() }),
};

const drawingOptions = {
  model: z.string().optional().describe("image model id from GET /v1/public/image-models"),
  n: z.number().int().optional().describe("number of pictures (plan cap 1 Free, 4 Pro, 10 Max)"),
  aspect_ratio: z.string().optional().describe("1:1, 2:3, 3:2, 3:4, 4:3, 4:5, 5:4, 9:16, 16:9 or 21:9"),
  output_format: z.string().optional().describe("png, jpeg or webp (default webp)"),
  resolution: z.string().optional().describe("512, 1K, 2K or 4K (plan cap 1K Free, 2K Pro, 4K Max)"),
  size: z.string().optional().describe("explicit WIDTHxHEIGHT where the model takes it"),
  quality: z.string().optional().describe("auto, low, medium or high"),
  background: z.string().optional().describe("auto, transparent or opaque (transparent needs png or webp)"),
  output_compression: z.number().int().optional().describe("0-100, webp and jpeg only"),
  seed: z.number().int().optional(),
  negative_prompt: z.string().optional().describe("diffusion models only"),
  cfg_scale: z.number().optional().describe("diffusion models only; range per model"),
  style_preset: z.string().optional().describe("per model, from GET /v1/image/styles"),
  project_id: z.string().optional().describe("project id; omitted: your default project"),
  parent_asset_id: z.string().optional().describe("library picture this one follows (lineage)"),
};

export function registerImageTools(server: McpServer, context: McpToolContext): void {
  server.registerTool(
    "image_generate",
    {
      title: "Generate pictures",
      description:
        "Draw pictures from a text prompt. Each picture comes back as image content and is saved in your library (asset_id in the structured result).",
      inputSchema: {
        prompt: z.string().describe("what to draw"),
        ...drawingOptions,
        enhance_prompt: z.boolean().optional().describe("expand the prompt with a chat model first"),
      },
      outputSchema: pictureResultSchema,
    },
    (args) => context.run(async (call) => imageToolResult(await context.gateway.images.generate(parseImageGeneration(args), call))),
  );

  server.registerTool(
    "image_edit",
    {
      title: "Edit pictures",
      description:
        "Change or combine up to four pictures following a prompt. `images`: URLs, data: URLs or library asset ids; `image_roles` (same order): edit (the picture to change, first only), subject (keep it, place it in a new picture) or reference (borrow what the prompt asks for).",
      inputSchema: {
        prompt: z.string().describe("what to change or draw"),
        images: z.array(z.string()).describe("each an http(s) URL, a data: URL or a library asset_id"),
        image_roles: z.array(z.string()).optional().describe("edit, subject or reference per picture; omitted: the model's default role"),
        ...drawingOptions,
      },
      outputSchema: pictureResultSchema,
    },
    ({ images, image_roles: roles, ...rest }) =>
      context.run(async (call) => {
        const entries = images.map((source, index) => {
          const role = roles?.[index];
          const entry: Record<string, unknown> = isFileId(source.trim()) ? { asset_id: source.trim() } : { url: source };
          if (role !== undefined) entry.role = role;
          return entry;
        });
        return imageToolResult(await context.gateway.images.edit(parseImageEdit({ ...rest, images: entries }), call));
      }),
  );

  server.registerTool(
    "image_describe",
    {
      title: "Describe a picture",
      description: "Describe a picture or answer a question about it with a vision-capable chat model (billed as chat tokens).",
      inputSchema: {
        image: z.string().describe("an http(s) URL, a data: URL, base64 bytes or a library asset_id"),
        prompt: z.string().optional().describe("the question; default: a general description"),
        model: z.string().optional().describe("an allowlisted describe model"),
      },
      outputSchema: { model: z.string(), text: z.string() },
    },
    ({ image, prompt, model }) =>
      context.run(async (call) => {
        const source = image.trim();
        const fields: Record<string, unknown> = isFileId(source) ? {} : /^https?:/i.test(source) ? { mediaUrl: source } : { mediaBase64: source };
        if (prompt !== undefined) fields.prompt = prompt;
        if (model !== undefined) fields.model = model;
        // A library picture is read (and checked) once, here, and handed over as it is.
        const picture = isFileId(source) ? { read: await context.gateway.imageLibrary.readPicture(call.caller.agent.id, source, "image") } : undefined;
        const body = parseDescribeRequest(fields, picture);
        const described = await context.gateway.describer.describe(body, { ...call, endpoint: "image.describe" });
        return jsonToolResult({ model: described.model, text: described.text }, described.text);
      }),
  );

  const transformInput = {
    image: z.string().optional().describe("an http(s) URL, a data: URL or base64 bytes; omitted: the library picture parent_asset_id names"),
    parent_asset_id: z.string().optional().describe("a library picture: the input when `image` is omitted, and the result's lineage"),
    output_format: z.string().optional().describe("png or webp (default webp)"),
    model: z.string().optional().describe("an allowlisted model from GET /v1/public/image-models"),
    project_id: z.string().optional(),
  };

  server.registerTool(
    "image_upscale",
    {
      title: "Upscale a picture",
      description: "Enlarge a picture by one of the model's factors (refused, never rounded). The result is saved in your library.",
      inputSchema: { ...transformInput, scale: z.number().int().optional().describe("a factor the model offers; omitted: the provider's own") },
      outputSchema: pictureResultSchema,
    },
    (args) => context.run(async (call) => imageToolResult(await context.gateway.imageTransforms.upscale(parseImageUpscale(args), call))),
  );

  server.registerTool(
    "image_background_remove",
    {
      title: "Remove a picture's background",
      description: "Cut the subject out onto a transparent background (png or webp). The result is saved in your library.",
      inputSchema: transformInput,
      outputSchema: pictureResultSchema,
    },
    (args) => context.run(async (call) => imageToolResult(await context.gateway.imageTransforms.removeBackground(parseBackgroundRemoval(args), call))),
  );
}
