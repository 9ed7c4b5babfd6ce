import { Flags } from "@oclif/core";
import { GwCommand } from "../../src/cli/gw-command.js";
import { runTransformCommand, transformFlags, transformPictureArgument } from "../../src/cli/transform-command.js";

export default class ImageUpscale extends GwCommand {
  static override description =
    "Enlarge a picture (POST /v1/image/upscale) and save it like `gw image generate` does: to -o FILE, to stdout with -o -, or by default to image-<asset id>.<ext>. The operator enables an upscaler first (gw tools enable upscale local/lanczos).";
  static override examples = [
    "<%= config.bin %> image upscale photo.jpg --scale 4 -o big.png",
    "<%= config.bin %> image upscale https://example.com/icon.png --format webp -o - > icon@2x.webp",
    "<%= config.bin %> image upscale asset:file_01J... --json | jq -r .data[0].asset_id",
  ];
  static override args = { picture: transformPictureArgument };
  static override flags = {
    scale: Flags.integer({ description: "upscale factor, one the model offers (local/lanczos: 2 or 4) [default: the model's own; local/lanczos 2]", min: 1 }),
    ...transformFlags,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ImageUpscale);
    await runTransformCommand(args.picture, flags, flags.scale === undefined ? {} : { scale: flags.scale }, (client, body) => client.upscaleImage(body));
  }
}
