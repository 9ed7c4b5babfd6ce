import { Args } from "@oclif/core";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printJson, printLine } from "../../src/cli/output.js";

export default class StorageRm extends GwCommand {
  static override description = "Delete a stored file for good: bytes, record and every link to it (DELETE /v1/storage/files/ID).";
  static override examples = ["<%= config.bin %> storage rm file_01J..."];
  static override args = { id: Args.string({ description: "file id", required: true }) };
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(StorageRm);
    const body = await gatewayClient(flags).deleteFile(args.id);
    if (flags.json) return printJson(body);
    printLine(`deleted ${args.id}`);
  }
}
