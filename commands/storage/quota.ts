import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printLine } from "../../src/cli/output.js";

export default class StorageQuota extends GwCommand {
  static override description =
    "Storage used and allowed by the agent's plan (GET /v1/storage/quota): bytes, and the storage operations (uploads, presigned uploads, deletes) counted this month against the plan's limit.";
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run() {
    const { flags } = await this.parse(StorageQuota);
    const { quota, operations } = await gatewayClient(flags).storageLimits();
    return this.shown(quota, () => {
      const { usedBytes, limitBytes, usedFormatted, limitFormatted } = quota.data;
      printLine(`${usedFormatted} of ${limitFormatted} used (${usedBytes} of ${limitBytes} bytes)`);
      if (operations)
        printLine(
          `${operations.used.toLocaleString("en-US")} of ${operations.limit.toLocaleString("en-US")} storage operations used this month (${operations.period}, UTC; uploads, presigned uploads and deletes count)`,
        );
    });
  }
}
