import { GwCommand } from "../../src/cli/gw-command.js";
import { runImageCommand } from "../../src/cli/image-command.js";
import { imageRequestFlags, promptArgument } from "../../src/cli/image-options.js";
import type { ImageGenerationRequest } from "../../src/client/image-types.js";

export default class ImageGenerate extends GwCommand {
  static override description =
    "Draw pictures from a prompt (POST /v1/image/generations) and save them: to -o FILE (FILE-1.ext, FILE-2.ext ... when several), to stdout with -o -, or by default to image-<asset id>.<ext> in the current directory. The extension follows the picture's media type; -o cat.png without --format asks for png. With --batch FILE, one request per JSON line (see --batch).";
  static override examples = [
    '<%= config.bin %> image generate "a red fox in the snow" -o fox.png',
    'echo "a lighthouse at dusk" | <%= config.bin %> image generate - --n 2 --aspect-ratio 16:9',
    '<%= config.bin %> image generate "a logo" --format png --background transparent -o - > logo.png',
    '<%= config.bin %> image generate "a cat" --json | jq -r ".data[0].asset_id"',
    '<%= config.bin %> image generate --batch prompts.jsonl --concurrency 2 --format png -o out/   # lines like {"prompt":"a fox","aspect_ratio":"3:2","output":"fox"}',
  ];
  static override args = { prompt: promptArgument };
  static override flags = imageRequestFlags;

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ImageGenerate);
    await runImageCommand({ send: (client, body) => client.generateImages(body as unknown as ImageGenerationRequest) }, flags, args.prompt);
  }
}
