import { Args, Flags } from "@oclif/core";
import { UsageError } from "../../src/cli/cli-error.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printLine } from "../../src/cli/output.js";
import { pictureField } from "../../src/cli/picture-argument.js";
import { textArgument } from "../../src/cli/stdin.js";
import { type DescribeImageRequest, VisionClient } from "../../src/client/vision-client.js";

export default class ImageDescribe extends GwCommand {
  static override description =
    "Describe a picture, or ask a question about it (POST /v1/image/describe). A URL is downloaded by the gateway; a FILE (or - for the bytes on stdin) is sent inline. Prints the model's answer.";
  static override examples = [
    "<%= config.bin %> image describe photo.jpg",
    '<%= config.bin %> image describe https://example.com/chart.png --prompt "What is the trend?"',
    "cat scan.png | <%= config.bin %> image describe - --json | jq -r .text",
  ];
  static override args = { picture: Args.string({ description: "FILE, an http(s) URL, or - to read the picture from stdin", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    prompt: Flags.string({ char: "p", description: "the question about the picture; - reads it from stdin [default: a general description]" }),
    model: Flags.string({ description: "describe model id (must be allowlisted in tools.describe) [default: the gateway's default]" }),
    json: Flags.boolean({ ...jsonFlag, description: "print exactly the API body ({model, text})" }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(ImageDescribe);
    if (args.picture === "-" && flags.prompt === "-") throw new UsageError("the picture and the prompt cannot both come from stdin");
    const client = new VisionClient(gatewayClient(flags).transport);
    const body: DescribeImageRequest = { ...(await pictureField(args.picture)) };
    if (flags.prompt !== undefined) body.prompt = await textArgument(flags.prompt, "prompt");
    if (flags.model !== undefined) body.model = flags.model;
    const result = await client.describeImage(body);
    return this.shown(result, () => printLine(result.text));
  }
}
