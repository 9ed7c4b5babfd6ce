import { GwCommand } from "../../src/cli/gw-command.js";
import { runTransformCommand, transformFlags, transformPictureArgument } from "../../src/cli/transform-command.js";

export default class ImageRemoveBackground extends GwCommand {
  static override description =
    "Cut the subject out onto a transparent background (POST /v1/image/background-removal) and save it like `gw image generate` does: png or webp, to -o FILE, to stdout with -o -, or by default to image-<asset id>.<ext>. The operator enables a remover first (gw tools enable background local/flat-background, for flat backgrounds only).";
  static override examples = [
    "<%= config.bin %> image remove-background product.jpg -o product.png",
    "<%= config.bin %> image remove-background asset:file_01J... --format webp",
  ];
  static override args = { picture: transformPictureArgument };
  static override flags = transformFlags;

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ImageRemoveBackground);
    await runTransformCommand(args.picture, flags, {}, (client, body) => client.removeBackground(body));
  }
}
