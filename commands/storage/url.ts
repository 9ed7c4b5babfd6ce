import { Args } from "@oclif/core";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printLine } from "../../src/cli/output.js";

export default class StorageUrl extends GwCommand {
  static override description =
    "Print a signed download link for a stored file (GET /v1/storage/files/ID/url); anyone holding it can download until it expires.";
  static override examples = ['curl -o out.bin "$(<%= config.bin %> storage url file_01J...)"'];
  static override args = { id: Args.string({ description: "file id", required: true }) };
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run() {
    const { args, flags } = await this.parse(StorageUrl);
    const body = await gatewayClient(flags).fileUrl(args.id);
    return this.shown(body, () => {
      printLine(body.data.url);
    });
  }
}
