import { Args } from "@oclif/core";
import { batchLines } from "../../src/cli/batch-output.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printLine } from "../../src/cli/output.js";

export default class BatchCancel extends GwCommand {
  static override description =
    "Cancel a batch that is still running (POST /v1/batches/ID/cancel): no new line starts, the lines in flight finish, and it ends `cancelled` with the answers so far in its output file (`gw batch results ID`). Prints the batch, now `cancelling`. A batch that has already ended cannot be cancelled: the gateway's refusal, non-zero exit.";
  static override examples = ["<%= config.bin %> batch cancel batch_01J...", "<%= config.bin %> batch cancel batch_01J... --json | jq -r .status"];
  static override args = { id: Args.string({ description: "batch id (batch_...)", required: true }) };
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run() {
    const { args, flags } = await this.parse(BatchCancel);
    const batch = await gatewayClient(flags).batches.cancel(args.id);
    return this.shown(batch, () => {
      for (const line of batchLines(batch)) printLine(line);
    });
  }
}
