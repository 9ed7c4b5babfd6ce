import { Args, Flags } from "@oclif/core";
import type { ImageGenerationRequest } from "../../src/client/image-types.js";
import { CliError } from "../../src/cli/cli-error.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag, numberFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { formatOfTarget, pictureTargets, writePicture } from "../../src/cli/image-files.js";
import { note, printJson } from "../../src/cli/output.js";
import { textArgument } from "../../src/cli/stdin.js";
import { humanBytes } from "../../src/cli/transfer-progress.js";

export default class ImageGenerate extends GwCommand {
  static override description =
    "Draw pictures from a prompt (POST /v1/image/generations) and save them: to -o FILE (FILE-1.ext, FILE-2.ext ... when several), to stdout with -o -, or by default to image-<asset id>.<ext> in the current directory. The extension follows the picture's media type; -o cat.png without --format asks for png.";
  static override examples = [
    '<%= config.bin %> image generate "a red fox in the snow" -o fox.png',
    'echo "a lighthouse at dusk" | <%= config.bin %> image generate - --n 2 --aspect-ratio 16:9',
    '<%= config.bin %> image generate "a logo" --format png --background transparent -o - > logo.png',
    '<%= config.bin %> image generate "a cat" --json | jq -r ".data[0].asset_id"',
  ];
  static override args = { prompt: Args.string({ description: "what to draw; - reads it from stdin", required: true }) };
  static override flags = {
    output: Flags.string({ char: "o", description: "where to write the picture(s); - is stdout (one picture only) [default: ./image-<asset id>.<ext>]" }),
    n: Flags.integer({ description: "number of pictures (plan cap 1 Free, 4 Pro, 10 Max)", min: 1 }),
    "aspect-ratio": Flags.string({ description: "1:1, 2:3, 3:2, 3:4, 4:3, 4:5, 5:4, 9:16, 16:9 or 21:9" }),
    format: Flags.string({ description: "output format: png, jpeg, webp or svg [default: webp, or the -o FILE extension]" }),
    resolution: Flags.string({ description: "512, 1K, 2K or 4K (plan cap 1K Free, 2K Pro, 4K Max)" }),
    size: Flags.string({ description: "explicit pixels as WIDTHxHEIGHT (overrides --resolution where supported)" }),
    quality: Flags.string({ description: "auto, low, medium or high" }),
    background: Flags.string({ description: "auto, transparent or opaque (transparent needs png or webp)" }),
    compression: Flags.integer({ description: "output_compression 0 to 100 (webp and jpeg only)", min: 0, max: 100 }),
    seed: Flags.integer({ description: "seed; the same inputs reproduce the same picture", min: 0 }),
    "negative-prompt": Flags.string({ description: "what not to draw (diffusion models only)" }),
    "cfg-scale": numberFlag({ description: "prompt adherence (diffusion models only; range per model)" }),
    "style-preset": Flags.string({ description: "style preset (vocabulary per model: GET /v1/image/styles)" }),
    model: Flags.string({ description: "image model id [default: the gateway's default image model]" }),
    project: Flags.string({ description: "project id from `gw projects list` [default: your default project]" }),
    parent: Flags.string({ description: "asset id of the library picture this one follows (its lineage)" }),
    json: Flags.boolean({ ...jsonFlag, description: "print exactly the API body (pictures as base64) on stdout; files are written only with -o FILE" }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ImageGenerate);
    const output = flags.output;
    if (output === "-" && flags.json) throw new CliError("--json and -o - both want stdout; choose one");
    if (output === "-" && flags.n !== undefined && flags.n > 1) throw new CliError("-o - writes one picture; drop --n or pass -o FILE");
    const client = gatewayClient(flags);

    const request: ImageGenerationRequest = { prompt: await textArgument(args.prompt, "prompt") };
    const targetFormat = output !== undefined && output !== "-" ? formatOfTarget(output) : undefined;
    const format = flags.format ?? targetFormat;
    if (flags.format !== undefined && targetFormat !== undefined && targetFormat !== normalizedFormat(flags.format)) {
      throw new CliError(`-o ${output} names ${targetFormat} but --format is ${flags.format}; make them agree`);
    }
    const optional: Array<[keyof ImageGenerationRequest, string | number | undefined]> = [
      ["model", flags.model],
      ["n", flags.n],
      ["aspect_ratio", flags["aspect-ratio"]],
      ["output_format", format],
      ["resolution", flags.resolution],
      ["size", flags.size],
      ["quality", flags.quality],
      ["background", flags.background],
      ["output_compression", flags.compression],
      ["seed", flags.seed],
      ["negative_prompt", flags["negative-prompt"]],
      ["cfg_scale", flags["cfg-scale"]],
      ["style_preset", flags["style-preset"]],
      ["project_id", flags.project],
      ["parent_asset_id", flags.parent],
    ];
    const body: Record<string, unknown> = { ...request };
    for (const [name, value] of optional) if (value !== undefined) body[name] = value;

    const result = await client.generateImages(body as unknown as ImageGenerationRequest);
    if (flags.json) {
      printJson(result);
      if (output === undefined) return;
    }
    if (result.data.length === 0) throw new CliError(result.refusal ? `the model declined to draw: ${result.refusal}` : "the gateway returned no pictures");
    if (output === "-") {
      if (result.data.length > 1) throw new CliError(`-o - writes one picture but the gateway returned ${result.data.length}`);
      await writeBytes(Buffer.from(result.data[0]!.b64_json, "base64"));
      return;
    }
    const targets = pictureTargets(result.data, output);
    for (const [index, picture] of result.data.entries()) {
      const bytes = Buffer.from(picture.b64_json, "base64");
      const target = targets[index]!;
      await writePicture(target, bytes);
      note(`saved ${target.path} (${picture.media_type}, ${humanBytes(bytes.length)}${picture.asset_id ? `, asset ${picture.asset_id}` : ""})`);
    }
  }
}

function normalizedFormat(format: string): string {
  const lower = format.toLowerCase();
  return lower === "jpg" ? "jpeg" : lower;
}

function writeBytes(bytes: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(bytes, (error) => (error ? reject(error) : resolve()));
  });
}
