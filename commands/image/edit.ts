import { Flags } from "@oclif/core";
import { UsageError } from "../../src/cli/cli-error.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { runImageCommand } from "../../src/cli/image-command.js";
import { imageEditInputs, resolveLineImages } from "../../src/cli/image-inputs.js";
import { imageRequestFlags, promptArgument } from "../../src/cli/image-options.js";
import type { ImageEditRequest } from "../../src/client/image-types.js";

export default class ImageEdit extends GwCommand {
  static override description =
    "Change or combine pictures from a prompt (POST /v1/image/edits) and save the result like `gw image generate` does: to -o FILE, to stdout with -o -, or by default to image-<asset id>.<ext>. Local files are sent as data: URLs. With --batch FILE, one request per JSON line; a line's `images` strings take the --image syntax (files are read from the current directory), and --image gives the pictures of lines that name none.";
  static override examples = [
    '<%= config.bin %> image edit "make it night" --image photo.jpg:edit -o night.webp',
    '<%= config.bin %> image edit "put this cat in a spaceship" --image asset:file_01J...:subject --image https://example.com/ship.png',
    '<%= config.bin %> image edit "in this style" --image style.png:reference --image sketch.png:edit --format png -o - > out.png',
    '<%= config.bin %> image edit --batch edits.jsonl --image logo.png:subject -o out/   # lines like {"prompt":"on a mug"}',
  ];
  static override args = { prompt: promptArgument };
  static override flags = {
    image: Flags.string({
      char: "i",
      multiple: true,
      // --image a.png "the prompt": the prompt is not a second picture.
      multipleNonGreedy: true,
      description:
        "a picture to work from, 1 to 4 (repeat the flag): a local FILE, an http(s) or data: URL, or asset:ID for a library picture. A trailing :edit, :subject or :reference sets its role (photo.png:edit, asset:ID:subject); only these three words count as a role, so https://x/y.png stays intact. Without a role the model's default applies.",
    }),
    ...imageRequestFlags,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ImageEdit);
    const specs = flags.image ?? [];
    if (specs.length === 0 && flags.batch === undefined) throw new UsageError("an edit needs a picture: pass --image FILE|URL|asset:ID (up to 4)");
    const images = await imageEditInputs(specs);
    await runImageCommand(
      { send: (client, body) => client.editImages(body as unknown as ImageEditRequest), prepareLine: resolveLineImages },
      flags,
      args.prompt,
      images.length > 0 ? { images } : {},
    );
  }
}
