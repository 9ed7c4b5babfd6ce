import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printJson, printLine } from "../../src/cli/output.js";

export default class StorageQuota extends GwCommand {
  static override description = "Storage used and allowed by the agent's plan (GET /v1/storage/quota).";
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run(): Promise<void> {
    const { flags } = await this.parse(StorageQuota);
    const body = await gatewayClient(flags).storageQuota();
    if (flags.json) return printJson(body);
    const { usedBytes, limitBytes, usedFormatted, limitFormatted } = body.data;
    printLine(`${usedFormatted} of ${limitFormatted} used (${usedBytes} of ${limitBytes} bytes)`);
  }
}
