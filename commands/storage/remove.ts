import { Args } from "@oclif/core";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printLine } from "../../src/cli/output.js";

export default class StorageRemove extends GwCommand {
  // The short verb it had first, kept for scripts: `list`/`remove` are the verbs of every topic.
  static override aliases = ["storage:rm"];
  static override description = "Delete a stored file for good: bytes, record and every link to it (DELETE /v1/storage/files/ID).";
  static override examples = ["<%= config.bin %> storage remove file_01J..."];
  static override args = { id: Args.string({ description: "file id", required: true }) };
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run() {
    const { args, flags } = await this.parse(StorageRemove);
    const body = await gatewayClient(flags).deleteFile(args.id);
    return this.shown(body, () => {
      printLine(`deleted ${args.id}`);
    });
  }
}
